// A user's program, as README.md shows it: only the versioned jar on the class path
// (`java -cp mcpool-x.y.z.jar:. App`), no java.library.path, no mcpool.jni.library.
// Set then get against the server named by the first argument or MCPOOL_TEST_SERVER.
import io.mcpool.Mcpool;

public class App {
    public static void main(String[] args) {
        String server = args.length > 0 ? args[0] : System.getenv("MCPOOL_TEST_SERVER");
        try (Mcpool mc = Mcpool.builder().servers(server).build()) {
            if (!mc.set("app:greeting", "hello from mcpool-java " + Mcpool.coreVersion())) {
                throw new IllegalStateException("set was not stored");
            }
            System.out.println(mc.get("app:greeting"));
        }
    }
}
