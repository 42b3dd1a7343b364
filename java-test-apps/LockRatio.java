import java.util.concurrent.locks.ReentrantLock;

/**
 * Known answer for event=lock: two contended sites with different wait times. At site A a holder keeps
 * LockRatio$A (synchronized) for 4 ms at a time, at site B a holder keeps a ReentrantLock for 2 ms; each
 * site's waiter comes back every millisecond. The app measures every wait itself and prints
 * "WAIT a=MS b=MS" so tests compare the profile against what happened.
 * Usage: LockRatio [seconds=3]
 */
public class LockRatio {
    static final class A {}
    static final A LOCK_A = new A();
    static final ReentrantLock LOCK_B = new ReentrantLock();
    static volatile long sink;
    static long waitedA, waitedB;

    static void sleepMs(long ms) {
        try { Thread.sleep(ms); } catch (InterruptedException e) { }
    }

    static void holdA(long end) {
        while (System.nanoTime() < end) {
            synchronized (LOCK_A) { sleepMs(4); }
            sleepMs(1);
        }
    }

    static void waitA(long end) {
        while (System.nanoTime() < end) {
            long t0 = System.nanoTime();
            synchronized (LOCK_A) { waitedA += System.nanoTime() - t0; }
            sleepMs(1);
        }
    }

    static void holdB(long end) {
        while (System.nanoTime() < end) {
            LOCK_B.lock();
            try { sleepMs(2); } finally { LOCK_B.unlock(); }
            sleepMs(1);
        }
    }

    static void waitB(long end) {
        while (System.nanoTime() < end) {
            long t0 = System.nanoTime();
            LOCK_B.lock();
            try { waitedB += System.nanoTime() - t0; } finally { LOCK_B.unlock(); }
            sleepMs(1);
        }
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        System.out.println("READY");
        Thread[] ts = {new Thread(() -> holdA(end), "hold-a"), new Thread(() -> waitA(end), "wait-a"),
                       new Thread(() -> holdB(end), "hold-b"), new Thread(() -> waitB(end), "wait-b")};
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        System.out.printf("WAIT a=%d b=%d%n", waitedA / 1000000, waitedB / 1000000);
    }
}
