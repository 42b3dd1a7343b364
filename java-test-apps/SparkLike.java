import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.locks.LockSupport;

/**
 * A JVM that behaves like a Spark executor: a pool of task threads that rename themselves per task like
 * Spark does ("Executor task launch worker for task 12.0 in stage 3.0 (TID 45)"), running map work
 * (hot method mapPartition) in stage 1 and shuffle-like work (hot method shuffleWrite: hashing, sorting
 * and serialising records) in stage 2; plus a heartbeat thread that sleeps (driver-heartbeater) and
 * block-manager-like idle threads that park (block-manager-ask-thread-pool-N).
 * Expected CPU profile: mapPartition and shuffleWrite carry nearly all task CPU, in about equal shares.
 * Usage: SparkLike [seconds=6] [tasks in parallel=2]
 */
public class SparkLike {
    static volatile long sink;

    static long mapPartition(int seed) {
        long acc = seed;
        for (int i = 0; i < 3_000_000; i++) {
            acc = acc * 31 + (i ^ (acc >>> 7));
        }
        return acc;
    }

    static long shuffleWrite(int seed) throws Exception {
        Map<Integer, Integer> buckets = new HashMap<>();
        int[] keys = new int[60_000];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = (seed * 7919 + i * 104729) & 0xfffff;
            buckets.merge(keys[i] & 1023, 1, Integer::sum);
        }
        Arrays.sort(keys);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        for (int k : keys) out.writeInt(k);
        return bytes.size() + buckets.size();
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 6;
        int parallel = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        Thread heartbeat = new Thread(() -> {
            while (true) {
                try { Thread.sleep(100); } catch (InterruptedException e) { return; }
            }
        }, "driver-heartbeater");
        heartbeat.setDaemon(true);
        heartbeat.start();
        for (int i = 0; i < 4; i++) {
            Thread t = new Thread(LockSupport::park, "block-manager-ask-thread-pool-" + i);
            t.setDaemon(true);
            t.start();
        }
        ExecutorService pool = Executors.newFixedThreadPool(parallel);
        System.out.println("READY");
        System.out.flush();
        int tid = 0;
        for (int stage = 1; System.nanoTime() < end; stage++) {
            final int s = stage;
            java.util.List<java.util.concurrent.Future<?>> running = new java.util.ArrayList<>();
            for (int task = 0; task < parallel * 2; task++) {
                final int t = task, id = tid++;
                running.add(pool.submit(() -> {
                    Thread.currentThread().setName("Executor task launch worker for task " + t + ".0 in stage "
                        + s + ".0 (TID " + id + ")");
                    // a task runs ~400 ms, like a small real one
                    long taskEnd = System.nanoTime() + 400_000_000L;
                    try {
                        while (System.nanoTime() < taskEnd)
                            sink += (s % 2 == 1) ? mapPartition(id) : shuffleWrite(id);
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                    Thread.currentThread().setName("Executor task launch worker-idle");
                }));
            }
            for (java.util.concurrent.Future<?> f : running) f.get();
        }
        pool.shutdown();
    }
}
