// Places keys with the real spymemcached (Debian libspymemcached-java) and prints
// KEY<TAB>HOST:PORT per key, in input order, as the library's own node locator answers.
// The servers must be running (the client connects to them).
//
//   java -cp spymemcached.jar:. PlaceSpymemcached --servers H:P,... [--weights W,...]
//        [--locator ketama|arraymod-crc] [--format SPYMEMCACHED|LIBMEMCACHED] < keys
//
// ketama without weights and with the default format: the locator of a MemcachedClient
// built with KetamaConnectionFactory. With weights or the LIBMEMCACHED format: the library's
// KetamaNodeLocator built over that client's nodes. arraymod-crc: ARRAY_MOD + CRC_HASH.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.spy.memcached.AddrUtil;
import net.spy.memcached.ConnectionFactory;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.DefaultHashAlgorithm;
import net.spy.memcached.KetamaConnectionFactory;
import net.spy.memcached.KetamaNodeKeyFormatter;
import net.spy.memcached.KetamaNodeLocator;
import net.spy.memcached.MemcachedClient;
import net.spy.memcached.MemcachedNode;
import net.spy.memcached.NodeLocator;
import net.spy.memcached.util.DefaultKetamaNodeLocatorConfiguration;

public class PlaceSpymemcached {
  public static void main(String[] args) throws Exception {
    String servers = null, weights = null, locatorName = "ketama", format = "SPYMEMCACHED";
    for (int i = 0; i < args.length; i += 2) {
      switch (args[i]) {
        case "--servers": servers = args[i + 1]; break;
        case "--weights": weights = args[i + 1]; break;
        case "--locator": locatorName = args[i + 1]; break;
        case "--format": format = args[i + 1]; break;
        default: throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    List<InetSocketAddress> addrs = AddrUtil.getAddresses(servers.replace(',', ' '));
    ConnectionFactory cf;
    if (locatorName.equals("arraymod-crc")) {
      cf = new ConnectionFactoryBuilder().setLocatorType(ConnectionFactoryBuilder.Locator.ARRAY_MOD)
          .setHashAlg(DefaultHashAlgorithm.CRC_HASH).build();
    } else {
      cf = new KetamaConnectionFactory();
    }
    MemcachedClient client = new MemcachedClient(cf, addrs);
    NodeLocator locator = client.getNodeLocator();
    if (locatorName.equals("ketama") && (weights != null || !format.equals("SPYMEMCACHED"))) {
      // The client's nodes, in server-list order.
      List<MemcachedNode> nodes = new ArrayList<>();
      for (InetSocketAddress a : addrs) {
        for (MemcachedNode n : locator.getAll()) {
          if (n.getSocketAddress().equals(a)) nodes.add(n);
        }
      }
      Map<InetSocketAddress, Integer> w = new HashMap<>();
      if (weights != null) {
        String[] ws = weights.split(",");
        for (int i = 0; i < addrs.size(); i++) w.put(addrs.get(i), Integer.parseInt(ws[i]));
      }
      locator = new KetamaNodeLocator(nodes, DefaultHashAlgorithm.KETAMA_HASH, w,
          new DefaultKetamaNodeLocatorConfiguration(
              new KetamaNodeKeyFormatter(KetamaNodeKeyFormatter.Format.valueOf(format))));
    }
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintStream out = new PrintStream(System.out, false, "UTF-8");
    String key;
    while ((key = in.readLine()) != null) {
      if (key.isEmpty()) continue;
      InetSocketAddress a = (InetSocketAddress) locator.getPrimary(key).getSocketAddress();
      out.print(key + "\t" + a.getAddress().getHostAddress() + ":" + a.getPort() + "\n");
    }
    out.flush();
    client.shutdown();
  }
}
