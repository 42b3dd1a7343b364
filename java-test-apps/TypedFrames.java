/**
 * Known answer for typed Java frames (ann): hot() is called often enough to be JIT-compiled and
 * inlines the small mix(); run with -Xint every frame is interpreted, with -XX:TieredStopAtLevel=1
 * hot() is C1-compiled. Prints READY, then spins for the given seconds. Usage: TypedFrames [seconds=3]
 */
public class TypedFrames {
    static volatile long sink;

    static long mix(long x) {
        x ^= x << 13;
        x ^= x >>> 7;
        x ^= x << 17;
        return x * 0x9E3779B97F4A7C15L;
    }

    static long hot(int n, long seed) {
        long s = seed;
        for (int i = 0; i < n; i++)
            s = mix(s + i);
        return s;
    }

    public static void main(String[] args) {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        System.out.println("READY");
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long s = 1;
        while (System.nanoTime() < end)
            s += hot(20_000, s);
        sink = s;
    }
}
