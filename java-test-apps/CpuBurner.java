import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * Known answer: two hot methods, burnHeavy and burnLight, doing the same kind of work in a 2:1 ratio.
 * The app measures its own thread CPU time spent in each and prints it at the end as
 * "SHARE burnHeavy=P burnLight=Q" (percent of the main thread's measured CPU), so tests compare the
 * profile against what really happened rather than against 2:1.
 * Usage: CpuBurner [seconds=3]
 */
public class CpuBurner {
    static volatile long sink;

    static long burnHeavy(long n) {
        long x = 0;
        for (long i = 0; i < n; i++) {
            x += (i * 31) ^ (x >>> 3);
        }
        return x;
    }

    static long burnLight(long n) {
        long x = 1;
        for (long i = 0; i < n; i++) {
            x += (i * 17) ^ (x >>> 5);
        }
        return x;
    }

    public static void main(String[] args) {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        System.out.println("READY");
        System.out.flush();
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long heavy = 0, light = 0, startAll = mx.getCurrentThreadCpuTime();
        long chunk = 2_000_000;
        while (System.nanoTime() < end) {
            long t0 = mx.getCurrentThreadCpuTime();
            sink += burnHeavy(2 * chunk);
            long t1 = mx.getCurrentThreadCpuTime();
            sink += burnLight(chunk);
            long t2 = mx.getCurrentThreadCpuTime();
            heavy += t1 - t0;
            light += t2 - t1;
        }
        long all = mx.getCurrentThreadCpuTime() - startAll;
        System.out.printf("SHARE burnHeavy=%.1f burnLight=%.1f%n", 100.0 * heavy / all, 100.0 * light / all);
    }
}
