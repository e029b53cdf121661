// Places keys with the real spymemcached (Debian libspymemcached-java) for many
// ConnectionFactoryBuilder settings in one JVM, as each client's own NodeLocator answers.
// The servers must be running (each client connects to them).
//
//   java -cp spymemcached.jar:. PlaceSpySettings KEYFILE LOCATOR/HASH/H:P,H:P,... ... 
//
// LOCATOR: ARRAY_MOD or CONSISTENT (ConnectionFactoryBuilder.Locator); HASH: a
// DefaultHashAlgorithm name (NATIVE_HASH, CRC_HASH, FNV1_64_HASH, ...). For each job, in
// order, prints KEY<TAB>HOST:PORT for every key of KEYFILE (one per line, UTF-8).
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import net.spy.memcached.AddrUtil;
import net.spy.memcached.ConnectionFactory;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.DefaultHashAlgorithm;
import net.spy.memcached.MemcachedClient;
import net.spy.memcached.NodeLocator;

public class PlaceSpySettings {
  public static void main(String[] args) throws Exception {
    List<String> keys = new ArrayList<>();
    for (String k : new String(Files.readAllBytes(Paths.get(args[0])), StandardCharsets.UTF_8)
        .split("\n")) {
      if (!k.isEmpty()) keys.add(k);
    }
    PrintStream out = new PrintStream(System.out, false, "UTF-8");
    for (int j = 1; j < args.length; j++) {
      String[] job = args[j].split("/", 3);
      List<InetSocketAddress> addrs = AddrUtil.getAddresses(job[2].replace(',', ' '));
      ConnectionFactory cf = new ConnectionFactoryBuilder()
          .setLocatorType(ConnectionFactoryBuilder.Locator.valueOf(job[0]))
          .setHashAlg(DefaultHashAlgorithm.valueOf(job[1])).build();
      MemcachedClient client = new MemcachedClient(cf, addrs);
      NodeLocator locator = client.getNodeLocator();
      StringBuilder sb = new StringBuilder();
      for (String key : keys) {
        InetSocketAddress a = (InetSocketAddress) locator.getPrimary(key).getSocketAddress();
        sb.append(key).append('\t').append(a.getAddress().getHostAddress()).append(':')
            .append(a.getPort()).append('\n');
      }
      out.print(sb);
      client.shutdown();
    }
    out.flush();
  }
}
