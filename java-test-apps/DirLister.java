import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Known answer for kernel frames under file-system calls: listLoop lists a directory of 2000 files
 * (made in a temporary directory) again and again with File.list(), so the thread spends most of its
 * CPU time in open/getdents64/close system calls (iterate_dir, dcache_readdir, ... in the kernel).
 * Usage: DirLister [seconds=2]
 */
public class DirLister {
    static volatile long sink;

    static long listLoop(File dir, long end) {
        long n = 0;
        while (System.nanoTime() < end) {
            String[] names = dir.list();
            n += names == null ? 0 : names.length;
        }
        return n;
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 2;
        Path dir = Files.createTempDirectory("dirlister");
        try {
            for (int i = 0; i < 2000; i++)
                Files.createFile(dir.resolve("entry-" + i));
            System.out.println("READY");
            sink = listLoop(dir.toFile(), System.nanoTime() + (long) (seconds * 1e9));
        } finally {
            File[] files = dir.toFile().listFiles();
            if (files != null)
                for (File f : files)
                    f.delete();
            Files.delete(dir);
        }
    }
}
