import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The bundled demo for `make demo`: a small service-like workload with a few recognisable hot spots:
 * parsing text (String.split), hashing into a map, sorting, and a numeric kernel, on a pool of named
 * worker threads. Usage: Demo [seconds=5]
 */
public class Demo {
    static volatile long sink;

    static int parseWords(String line) {
        return line.split(" ").length;
    }

    static void countWords(List<String> lines, Map<String, Integer> counts) {
        for (String l : lines) {
            for (String w : l.split(" ")) {
                counts.merge(w, 1, Integer::sum);
            }
            sink += parseWords(l);
        }
    }

    static void sortRecords(Random r) {
        List<Integer> list = new ArrayList<>();
        for (int i = 0; i < 20000; i++) {
            list.add(r.nextInt());
        }
        Collections.sort(list);
        sink += list.get(0);
    }

    static double matrixKernel(int n) {
        double[][] a = new double[n][n];
        double s = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                a[i][j] = i * 0.5 + j;
        for (int k = 0; k < n; k++)
            for (int i = 0; i < n; i++)
                s += a[i][k] * a[k][i];
        return s;
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 5;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        List<String> lines = new ArrayList<>();
        Random r = new Random(42);
        for (int i = 0; i < 2000; i++) {
            StringBuilder sb = new StringBuilder();
            for (int j = 0; j < 12; j++) sb.append("w").append(r.nextInt(500)).append(' ');
            lines.add(sb.toString());
        }
        System.out.println("READY");
        Thread[] pool = new Thread[3];
        for (int t = 0; t < pool.length; t++) {
            final int id = t;
            pool[t] = new Thread(() -> {
                Random rr = new Random(id);
                Map<String, Integer> counts = new HashMap<>();
                while (System.nanoTime() < end) {
                    switch (id) {
                        case 0: countWords(lines, counts); break;
                        case 1: sortRecords(rr); break;
                        default: sink += (long) matrixKernel(120); break;
                    }
                }
            }, "demo-worker-" + t);
            pool[t].start();
        }
        for (Thread t : pool) t.join();
        System.out.println("DONE");
    }
}
