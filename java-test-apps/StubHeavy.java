import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;

/**
 * Known answer for samples AsyncGetCallTrace cannot walk: three phases, each in its own method, whose
 * CPU shares the app measures itself and prints as "SHARE megaCalls=P copyArrays=Q stringOps=R":
 * megaCalls makes megamorphic interface and virtual calls (itable / vtable stubs) to tiny methods,
 * copyArrays spends its time in System.arraycopy / Arrays.copyOf (arraycopy stubs), stringOps in string
 * intrinsics (indexOf, equals, compareTo). Usage: StubHeavy [seconds=4 [megaCalls copyArrays stringOps]]
 * (the work per round of each phase; default 3000000 150 3000, about 86 / 10 / 3 % of the time)
 */
public class StubHeavy {
    interface Shape { long area(long x); }
    static abstract class Base implements Shape { abstract long perim(long x); }
    static final class A extends Base { public long area(long x) { return x + 1; } long perim(long x) { return x ^ 1; } }
    static final class B extends Base { public long area(long x) { return x + 2; } long perim(long x) { return x ^ 2; } }
    static final class C extends Base { public long area(long x) { return x + 3; } long perim(long x) { return x ^ 3; } }
    static final class D extends Base { public long area(long x) { return x + 4; } long perim(long x) { return x ^ 4; } }
    static final class E extends Base { public long area(long x) { return x + 5; } long perim(long x) { return x ^ 5; } }

    static volatile long sink;
    static final Base[] SHAPES = {new A(), new B(), new C(), new D(), new E()};

    static long megaCalls(int n) {
        long s = 0;
        Shape[] shapes = SHAPES;
        for (int i = 0; i < n; i++) {
            Base b = (Base) shapes[i % 5];
            s += ((Shape) b).area(i);
            s += b.perim(s);
        }
        return s;
    }

    static long copyArrays(int n) {
        long[] src = new long[1 << 16];
        long[] dst = new long[1 << 16];
        long s = 0;
        for (int i = 0; i < n; i++) {
            System.arraycopy(src, 0, dst, 0, src.length);
            long[] c = Arrays.copyOf(src, src.length / 2);
            s += c.length + dst[i & 1023];
        }
        return s;
    }

    static final String HAY;
    static {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 4000; i++) sb.append((char) ('a' + i % 23));
        HAY = sb.toString() + "needle";
    }

    static long stringOps(int n) {
        long s = 0;
        String other = new String(HAY.toCharArray());
        for (int i = 0; i < n; i++) {
            s += HAY.indexOf("needle");
            s += HAY.equals(other) ? 1 : 0;
            s += HAY.compareTo(other);
        }
        return s;
    }

    public static void main(String[] args) {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 4;
        int nm = args.length > 3 ? Integer.parseInt(args[1]) : 3_000_000;
        int nc = args.length > 3 ? Integer.parseInt(args[2]) : 150;
        int ns = args.length > 3 ? Integer.parseInt(args[3]) : 3000;
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        System.out.println("READY");
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long tm = 0, tc = 0, ts = 0, all0 = mx.getCurrentThreadCpuTime();
        while (System.nanoTime() < end) {
            long t0 = mx.getCurrentThreadCpuTime();
            sink += megaCalls(nm);
            long t1 = mx.getCurrentThreadCpuTime();
            sink += copyArrays(nc);
            long t2 = mx.getCurrentThreadCpuTime();
            sink += stringOps(ns);
            long t3 = mx.getCurrentThreadCpuTime();
            tm += t1 - t0; tc += t2 - t1; ts += t3 - t2;
        }
        long all = mx.getCurrentThreadCpuTime() - all0;
        System.out.printf("SHARE megaCalls=%.1f copyArrays=%.1f stringOps=%.1f%n", 100.0 * tm / all, 100.0 * tc / all, 100.0 * ts / all);
    }
}
