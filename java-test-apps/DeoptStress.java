import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;

/**
 * Stress for the sampler: call sites that keep changing shape (new receiver classes generated all the
 * time through java.lang.reflect.Proxy in throw-away class loaders, so compiled code is deoptimised and
 * classes are unloaded), megamorphic dispatch, and GC pressure. Prints "ALIVE n" every second and "DONE".
 * Usage: DeoptStress [seconds=20]
 */
public class DeoptStress {
    public interface Op { long apply(long x); }

    static final class Inc implements Op { public long apply(long x) { return x + 1; } }
    static final class Dbl implements Op { public long apply(long x) { return x * 2; } }
    static final class Xor implements Op { public long apply(long x) { return x ^ 0x5a5a; } }
    static volatile Object garbage;
    static volatile long sink;

    static long drive(Op[] ops, int n) {
        long x = 1;
        for (int i = 0; i < n; i++) {
            x = ops[i % ops.length].apply(x);
            if ((i & 255) == 0) garbage = new long[64 + (i & 1023)];
        }
        return x;
    }

    static Op freshProxy(int k) {
        ClassLoader loader = new URLClassLoader(new URL[0], DeoptStress.class.getClassLoader());
        InvocationHandler h = (proxy, method, args) -> ((Long) args[0]) + k;
        return (Op) Proxy.newProxyInstance(loader, new Class<?>[] {Op.class}, h);
    }

    public static void main(String[] args) {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 20;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long nextReport = System.nanoTime() + 1_000_000_000L;
        System.out.println("READY");
        List<Object> keep = new ArrayList<>();
        int round = 0;
        while (System.nanoTime() < end) {
            Op[] mono = {new Inc()};
            sink += drive(mono, 200_000);                      // compiled monomorphic ...
            Op[] poly = {new Inc(), new Dbl(), new Xor(), freshProxy(round)};
            sink += drive(poly, 200_000);                      // ... then deoptimised by new receivers
            keep.add(new byte[1 << 16]);
            if (keep.size() > 200) keep.clear();               // old generation churn
            if ((round & 63) == 0) System.gc();               // unload the throw-away loaders
            round++;
            if (System.nanoTime() > nextReport) {
                System.out.println("ALIVE " + round);
                nextReport += 1_000_000_000L;
            }
        }
        System.out.println("DONE " + round);
    }
}
