import java.util.concurrent.Semaphore;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Known answer for event=lock: pairs of threads contend on a synchronized monitor (syncContended, lock
 * class LockApp$Monitor), on a ReentrantLock (juclContended) and on a Semaphore (semContended); each
 * holder keeps the lock ~2 ms, so waits are far above 10 us. Prints "SYNC_WAIT_NS n", the time the
 * sync threads measured entering the monitor. Usage: LockApp [seconds=3]
 */
public class LockApp {
    static final class Monitor {}
    static final Monitor MONITOR = new Monitor();
    static final ReentrantLock LOCK = new ReentrantLock();
    static final Semaphore SEM = new Semaphore(1);
    static volatile long sink;

    static void busy(long ns) {
        long end = System.nanoTime() + ns;
        while (System.nanoTime() < end) sink++;
    }

    /** Time the sync threads spent entering the monitor, as they measure it themselves. */
    static final java.util.concurrent.atomic.AtomicLong SYNC_WAIT_NS = new java.util.concurrent.atomic.AtomicLong();

    static void syncContended(long end) {
        long waited = 0;
        while (System.nanoTime() < end) {
            long t0 = System.nanoTime();
            synchronized (MONITOR) {
                waited += System.nanoTime() - t0;
                busy(2_000_000);
            }
        }
        SYNC_WAIT_NS.addAndGet(waited);
    }

    static void juclContended(long end) {
        while (System.nanoTime() < end) {
            LOCK.lock();
            try { busy(2_000_000); } finally { LOCK.unlock(); }
        }
    }

    static void semContended(long end) {
        while (System.nanoTime() < end) {
            try {
                SEM.acquire();
                try { busy(2_000_000); } finally { SEM.release(); }
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    static volatile Object garbage;

    /** Allocates steadily (for sessions that profile allocations beside locks). */
    static void allocLoop(long end) {
        while (System.nanoTime() < end) {
            garbage = new byte[2048];
            try { Thread.sleep(0, 50_000); } catch (InterruptedException e) { return; }
        }
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        System.out.println("READY");
        Thread[] ts = new Thread[6];
        for (int i = 0; i < 2; i++) {
            ts[i] = new Thread(() -> syncContended(end), "sync-" + i);
            ts[2 + i] = new Thread(() -> juclContended(end), "jucl-" + i);
            ts[4 + i] = new Thread(() -> semContended(end), "sem-" + i);
        }
        Thread allocator = new Thread(() -> allocLoop(end), "alloc-worker");
        allocator.setDaemon(true);
        allocator.start();
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        System.out.println("SYNC_WAIT_NS " + SYNC_WAIT_NS.get());
    }
}
