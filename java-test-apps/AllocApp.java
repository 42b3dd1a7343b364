/**
 * Known answer for event=alloc: allocStrings allocates String[] arrays and allocBytes allocates byte[]
 * arrays, 3 bytes of String[] for every byte of byte[] (by size). Usage: AllocApp [seconds=3]
 */
public class AllocApp {
    static volatile Object sink;

    static void allocStrings() {
        for (int i = 0; i < 300; i++) sink = new String[1000];   // ~4 KB each (compressed oops)
    }

    static void allocBytes() {
        for (int i = 0; i < 100; i++) sink = new byte[4000];
    }

    public static void main(String[] args) {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        System.out.println("READY");
        long end = System.nanoTime() + (long) (seconds * 1e9);
        while (System.nanoTime() < end) {
            allocStrings();
            allocBytes();
        }
    }
}
