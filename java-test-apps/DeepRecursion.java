/**
 * Known answer: the stack is ~1000 frames of recurse() deep, with the CPU burnt in burnAtBottom at the
 * leaf, under main. With jstackdepth=N every sample has at most N frames plus [truncated].
 * Usage: DeepRecursion [seconds=2] [depth=1000]
 */
public class DeepRecursion {
    static volatile long sink;

    static long burnAtBottom(long deadline) {
        long x = 0;
        while (System.nanoTime() < deadline) {
            for (int i = 0; i < 10000; i++) {
                x += (i * 7) ^ (x >>> 3);
            }
        }
        return x;
    }

    static long recurse(int depth, long deadline) {
        if (depth == 0) {
            return burnAtBottom(deadline);
        }
        return recurse(depth - 1, deadline) + 1;
    }

    public static void main(String[] args) {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 2;
        int depth = args.length > 1 ? Integer.parseInt(args[1]) : 1000;
        System.out.println("READY");
        System.out.flush();
        sink += recurse(depth, System.nanoTime() + (long) (seconds * 1e9));
    }
}
