// Whalin's memcached client (com.danga.MemCached / com.meetup.memcached SockIOPool) is not
// packaged anywhere we can install, so this program REPRODUCES its documented SockIOPool
// hashing (release 2.x: populateBuckets, populateConsistentBuckets, getBucket, getHash and
// the four hashing algorithms) using Java's own String.hashCode, java.util.zip.CRC32 and
// MessageDigest("MD5"), plus MemCachedClient's default key sanitizing
// (URLEncoder.encode(key, "UTF-8")). It prints KEY<TAB>HOST:PORT per input key.
//
//   java PlaceWhalin --servers H:P,... [--weights W,...]
//        --alg native|old-compat|new-compat|consistent [--no-sanitize] < keys
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.zip.CRC32;

public class PlaceWhalin {
  static String alg = "native";
  static String[] servers;
  static Integer[] weights;
  static List<String> buckets = new ArrayList<>();
  static TreeMap<Long, String> consistentBuckets = new TreeMap<>();

  public static void main(String[] args) throws Exception {
    boolean sanitize = true;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--servers": servers = args[++i].split(","); break;
        case "--weights": {
          String[] ws = args[++i].split(",");
          weights = new Integer[ws.length];
          for (int j = 0; j < ws.length; j++) weights[j] = Integer.valueOf(ws[j]);
          break;
        }
        case "--alg": alg = args[++i]; break;
        case "--no-sanitize": sanitize = false; break;
        default: throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    if (alg.equals("consistent")) populateConsistentBuckets(); else populateBuckets();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintStream out = new PrintStream(System.out, false, "UTF-8");
    String key;
    while ((key = in.readLine()) != null) {
      if (key.isEmpty()) continue;
      String k = sanitize ? URLEncoder.encode(key, "UTF-8") : key;
      String server;
      if (alg.equals("consistent")) {
        server = consistentBuckets.size() == 1 ? consistentBuckets.firstEntry().getValue()
            : consistentBuckets.get(getBucket(k));
      } else {
        server = buckets.size() == 1 ? buckets.get(0) : buckets.get((int) getBucket(k));
      }
      out.print(key + "\t" + server + "\n");
    }
    out.flush();
  }

  static void populateBuckets() {
    for (int i = 0; i < servers.length; i++) {
      if (weights != null && weights.length > i) {
        for (int k = 0; k < weights[i].intValue(); k++) buckets.add(servers[i]);
      } else {
        buckets.add(servers[i]);
      }
    }
  }

  static void populateConsistentBuckets() throws Exception {
    MessageDigest md5 = MessageDigest.getInstance("MD5");
    int totalWeight = 0;
    if (weights != null) {
      for (Integer w : weights) totalWeight += (w == null) ? 1 : w;
    } else {
      totalWeight = servers.length;
    }
    for (int i = 0; i < servers.length; i++) {
      int thisWeight = 1;
      if (weights != null && weights[i] != null) thisWeight = weights[i];
      double factor = Math.floor(((double) (40 * servers.length * thisWeight)) / (double) totalWeight);
      for (long j = 0; j < factor; j++) {
        byte[] d = md5.digest((servers[i] + "-" + j).getBytes());
        for (int h = 0; h < 4; h++) {
          Long k = ((long) (d[3 + h * 4] & 0xFF) << 24) | ((long) (d[2 + h * 4] & 0xFF) << 16)
              | ((long) (d[1 + h * 4] & 0xFF) << 8) | ((long) (d[0 + h * 4] & 0xFF));
          consistentBuckets.put(k, servers[i]);
        }
      }
    }
  }

  static long getBucket(String key) throws Exception {
    long hc = getHash(key);
    if (alg.equals("consistent")) {
      Long k = consistentBuckets.ceilingKey(hc);
      return (k == null) ? consistentBuckets.firstKey() : k;
    }
    long bucket = hc % buckets.size();
    if (bucket < 0) bucket *= -1;
    return bucket;
  }

  static long getHash(String key) throws Exception {
    switch (alg) {
      case "native": return (long) key.hashCode();
      case "old-compat": {
        long hash = 0;
        for (char c : key.toCharArray()) hash = (hash * 33) + c;
        return hash;
      }
      case "new-compat": {
        CRC32 checksum = new CRC32();
        checksum.update(key.getBytes());
        return (checksum.getValue() >> 16) & 0x7fff;
      }
      case "consistent": {
        MessageDigest md5 = MessageDigest.getInstance("MD5");
        byte[] b = md5.digest(key.getBytes());
        return ((long) (b[3] & 0xFF) << 24) | ((long) (b[2] & 0xFF) << 16)
            | ((long) (b[1] & 0xFF) << 8) | (long) (b[0] & 0xFF);
      }
      default: throw new IllegalArgumentException("unknown alg " + alg);
    }
  }
}
