import java.io.File;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * Known answer for kernel frames: writeLoop writes 64-byte buffers to a FileChannel on a temporary
 * file (rewinding every 1 MiB) in a tight loop, so most of the thread's CPU time is spent inside the
 * write system call (entry_SYSCALL_64, do_syscall_64, ksys_write, vfs_write, ...) under
 * SyscallWriter.writeLoop; with event=cpu as root, well over half of the samples carry kernel frames.
 * With threads > 1, as many threads run the same loop (for tests with many perf fds and rings).
 * Usage: SyscallWriter [seconds=2] [threads=1]
 */
public class SyscallWriter {
    static volatile long sink;

    static long writeLoop(FileChannel ch, ByteBuffer buf, long end) throws Exception {
        long n = 0;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 1000; i++) {
                buf.clear();
                n += ch.write(buf);
            }
            if (ch.position() >= (1 << 20)) {
                ch.position(0);
            }
        }
        return n;
    }

    static void run(double seconds, boolean ready) throws Exception {
        File f = File.createTempFile("syscallwriter", ".bin");
        f.deleteOnExit();
        try (RandomAccessFile raf = new RandomAccessFile(f, "rw")) {
            FileChannel ch = raf.getChannel();
            ByteBuffer buf = ByteBuffer.allocateDirect(64);
            if (ready) {
                System.out.println("READY");
            }
            sink += writeLoop(ch, buf, System.nanoTime() + (long) (seconds * 1e9));
        }
        f.delete();
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 2;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        Thread[] extra = new Thread[threads - 1];
        for (int i = 0; i < extra.length; i++) {
            extra[i] = new Thread(() -> {
                try {
                    run(seconds, false);
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }, "writer-" + i);
            extra[i].start();
        }
        run(seconds, true);
        for (Thread t : extra) {
            t.join();
        }
    }
}
