import java.io.File;
import java.io.RandomAccessFile;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;

/**
 * Known answer for event=page-faults: touchPages maps a fresh 64 MiB region of a sparse temporary file
 * and writes one byte per 4 KiB page from Java code, so nearly every page fault of the app is taken
 * in touchPages (the JIT and GC fault too, but far less). Usage: PageToucher [seconds=2]
 */
public class PageToucher {
    static volatile long sink;

    static long touchPages(FileChannel ch, long offset, int size) throws Exception {
        MappedByteBuffer b = ch.map(FileChannel.MapMode.READ_WRITE, offset, size);
        for (int i = 0; i < size; i += 4096) {
            b.put(i, (byte) 1);
        }
        return b.get(size - 4096);
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 2;
        File f = File.createTempFile("pagetoucher", ".bin");
        f.deleteOnExit();
        try (RandomAccessFile raf = new RandomAccessFile(f, "rw")) {
            FileChannel ch = raf.getChannel();
            System.out.println("READY");
            long end = System.nanoTime() + (long) (seconds * 1e9);
            long offset = 0;
            int size = 64 << 20;
            while (System.nanoTime() < end) {
                sink += touchPages(ch, offset, size);
                offset += size;
                if (offset >= (1L << 32)) {
                    raf.setLength(0);
                    offset = 0;
                }
            }
        }
    }
}
