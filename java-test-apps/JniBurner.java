/**
 * Known answer for merged stacks: work() calls the native method nativeBurn, implemented in
 * test/native/jniburn.c, which burns CPU in the C function burn_loop. Expected stack:
 * ...;JniBurner.main;JniBurner.work;JniBurner.nativeBurn;Java_JniBurner_nativeBurn;burn_loop
 * Usage: JniBurner /abs/path/libjniburn.so [seconds=3]
 */
public class JniBurner {
    static native long nativeBurn(long iterations);
    static volatile long sink;

    static void work(long end) {
        while (System.nanoTime() < end) {
            sink += nativeBurn(5_000_000);
        }
    }

    public static void main(String[] args) {
        System.load(args[0]);
        double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 3;
        System.out.println("READY");
        work(System.nanoTime() + (long) (seconds * 1e9));
    }
}
