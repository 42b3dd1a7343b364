import java.io.InputStream;

/**
 * Known answer for event=wall: four threads that each spend the whole run in one state get equal wall
 * samples: wall-compute burns CPU in wallCompute, wall-sleep sleeps in wallSleep (Thread.sleep),
 * wall-blocked waits to enter a monitor in wallBlocked (held all along by wall-holder, which sleeps
 * inside wallHold), wall-pipe reads a pipe that stays silent in wallPipe (FileInputStream.read on a
 * child process's stdout). With "idle N", also starts N parked threads (idle-0..) and nothing else
 * runs: the agent's own cost with many idle threads.
 * Usage: WallApp [seconds=3] | WallApp idle N [seconds=5]
 */
public class WallApp {
    static volatile long sink;
    static final Object LOCK = new Object();

    static void wallCompute(long end) {
        long x = 0;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 10000; i++) x += (i * 31) ^ (x >>> 3);
        }
        sink += x;
    }

    static void wallSleep(long end) {
        try {
            while (System.nanoTime() < end) Thread.sleep(Math.max(1, (end - System.nanoTime()) / 1000000));
        } catch (InterruptedException e) {
        }
    }

    static void wallHold(long end) {
        synchronized (LOCK) {
            wallSleep(end + 500_000_000L);
        }
    }

    static void wallBlocked() {
        synchronized (LOCK) {
            sink++;
        }
    }

    static void wallPipe(InputStream in) {
        try {
            sink += in.read();
        } catch (Exception e) {
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("idle")) {
            int n = Integer.parseInt(args[1]);
            double seconds = args.length > 2 ? Double.parseDouble(args[2]) : 5;
            for (int i = 0; i < n; i++) {
                Thread t = new Thread(() -> java.util.concurrent.locks.LockSupport.park(), "idle-" + i);
                t.setDaemon(true);
                t.start();
            }
            System.out.println("READY");
            Thread.sleep((long) (seconds * 1000));
            return;
        }
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        Process child = new ProcessBuilder("sleep", String.valueOf((int) seconds + 2)).start();
        Thread holder = new Thread(() -> wallHold(end), "wall-holder");
        holder.setDaemon(true);
        holder.start();
        Thread.sleep(100);
        Thread[] ts = {
            new Thread(() -> wallCompute(end), "wall-compute"),
            new Thread(() -> wallSleep(end), "wall-sleep"),
            new Thread(() -> wallBlocked(), "wall-blocked"),
            new Thread(() -> wallPipe(child.getInputStream()), "wall-pipe"),
        };
        for (Thread t : ts) {
            t.setDaemon(true);
            t.start();
        }
        System.out.println("READY");
        Thread.sleep((long) (seconds * 1000));
        child.destroy();
    }
}
