/**
 * Benchmark workload: a fixed amount of deterministic CPU work on 2 threads; prints "ELAPSED_MS n".
 * Usage: BenchWorkload [iterations=400000000]
 */
public class BenchWorkload {
    static volatile long sink;

    static long work(long n, long seed) {
        long x = seed;
        for (long i = 0; i < n; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            x ^= x >>> 29;
        }
        return x;
    }

    public static void main(String[] args) throws Exception {
        long n = args.length > 0 ? Long.parseLong(args[0]) : 400_000_000L;
        long t0 = System.nanoTime();
        Thread a = new Thread(() -> sink += work(n, 1), "bench-a");
        Thread b = new Thread(() -> sink += work(n, 2), "bench-b");
        a.start(); b.start(); a.join(); b.join();
        System.out.println("ELAPSED_MS " + (System.nanoTime() - t0) / 1000000);
    }
}
