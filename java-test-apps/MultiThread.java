/**
 * Known answer: named threads. worker-alpha and worker-beta burn CPU for the whole run (in
 * alphaWork / betaWork); early-bird burns in earlyWork for ~0.5 s and ends; a thread starts as
 * rename-me and renames itself to renamed-worker before burning in renamedWork.
 * Usage: MultiThread [seconds=3]
 */
public class MultiThread {
    static volatile long sink;

    static long spin(long deadline) {
        long x = 0;
        while (System.nanoTime() < deadline) {
            for (int i = 0; i < 10000; i++) {
                x += (i * 13) ^ (x >>> 7);
            }
        }
        return x;
    }

    static void alphaWork(long deadline) { sink += spin(deadline); }
    static void betaWork(long deadline) { sink += spin(deadline); }
    static void earlyWork(long deadline) { sink += spin(deadline); }
    static void renamedWork(long deadline) { sink += spin(deadline); }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        Thread a = new Thread(() -> alphaWork(end), "worker-alpha");
        Thread b = new Thread(() -> betaWork(end), "worker-beta");
        Thread e = new Thread(() -> earlyWork(System.nanoTime() + 500_000_000L), "early-bird");
        Thread r = new Thread(() -> {
            Thread.currentThread().setName("renamed-worker");
            renamedWork(end);
        }, "rename-me");
        System.out.println("READY");
        System.out.flush();
        a.start(); b.start(); e.start(); r.start();
        e.join();
        System.out.println("EARLY-DONE");
        a.join(); b.join(); r.join();
    }
}
