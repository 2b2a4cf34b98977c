/*
 * Apache's Java client as a control in core's tests: one session that creates an ephemeral
 * node and reports, one line each on stdout, what the client tells it:
 *   state <KeeperState> <sessionId hex>     every session event
 *   created <path> <sessionId hex>          the ephemeral node is made
 *   owner <path> <ephemeralOwner hex|none>  the answer to "owner <path>" on stdin
 * "quit" on stdin (or stdin closed) closes the session and exits.
 * Run with the single-file launcher: java -cp <ZooKeeper jars> JavaSession.java <connect> <timeoutMs> <path>
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

public class JavaSession {
    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        String connect = args[0];
        int timeoutMs = Integer.parseInt(args[1]);
        String path = args[2];
        ZooKeeper[] holder = new ZooKeeper[1];
        ZooKeeper zk = new ZooKeeper(connect, timeoutMs, event -> {
            if (event.getType() == org.apache.zookeeper.Watcher.Event.EventType.None) {
                ZooKeeper client = holder[0];
                long id = client == null ? 0 : client.getSessionId();
                say("state " + event.getState() + " " + Long.toHexString(id));
            }
        });
        holder[0] = zk;
        while (zk.getState() != ZooKeeper.States.CONNECTED) Thread.sleep(10);
        zk.create(path, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
        say("created " + path + " " + Long.toHexString(zk.getSessionId()));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.equals("quit")) break;
            if (line.startsWith("owner ")) {
                String node = line.substring(6);
                try {
                    Stat stat = zk.exists(node, false);
                    say("owner " + node + " " + (stat == null ? "none" : Long.toHexString(stat.getEphemeralOwner())));
                } catch (Exception error) {
                    say("owner " + node + " error " + error.getClass().getSimpleName());
                }
            }
        }
        zk.close();
    }
}
