import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.server.util.ConfigUtils;

/**
 * N sessions of Apache's Java client (3.8) that follow the ensemble's configuration as
 * ZooKeeper's reconfiguration guide asks ("Rebalancing Client Connections"): a watch on
 * /zookeeper/config; when it fires, sync and getConfig, and if the configuration is new, sleep a
 * random short time (up to 1 s) and updateServerList — whose rule moves a client with
 * probability 1 - old/new when servers are added, and always when its server left (closing its
 * socket: the session sees Disconnected, then SyncConnected). Each session holds an ephemeral
 * node (the stand-in for a lease).
 *
 *   java -cp <zookeeper jars> EnsembleFollowers.java <connect> <count> <sessionTimeoutMs> <path>
 *
 * stdout, one JSON object a line: {"event":"ready","sessions":["<hex id>",...]} once every
 * session is connected and holds its node; then, for each "report" line on stdin,
 * {"event":"report","disconnects":[n,...],"expired":[n,...],"updates":[n,...]} in session order.
 * Exits when stdin closes.
 */
public class EnsembleFollowers {
    static PrintStream out;

    static final class Follower implements Watcher {
        final AtomicInteger disconnects = new AtomicInteger();
        final AtomicInteger expired = new AtomicInteger();
        final AtomicInteger updates = new AtomicInteger();
        final CountDownLatch connected = new CountDownLatch(1);
        final ScheduledExecutorService timer;
        volatile ZooKeeper zk;
        volatile long configVersion = -1;

        Follower(ScheduledExecutorService timer) {
            this.timer = timer;
        }

        @Override
        public void process(WatchedEvent event) {
            if (event.getType() == Event.EventType.None) {
                switch (event.getState()) {
                    case SyncConnected -> connected.countDown();
                    case Disconnected -> disconnects.incrementAndGet();
                    case Expired -> expired.incrementAndGet();
                    default -> { }
                }
                return;
            }
            if (ZooDefs.CONFIG_NODE.equals(event.getPath())) readConfig();
        }

        /** sync, then getConfig with this watcher; a new version is followed after a random delay. */
        void readConfig() {
            ZooKeeper current = zk;
            current.sync(ZooDefs.CONFIG_NODE, (rc, path, ctx) -> { }, null);
            current.getConfig(this, (AsyncCallback.DataCallback) (rc, path, ctx, data, stat) -> {
                if (rc != 0 || data == null) return;
                String[] config = ConfigUtils.getClientConfigStr(new String(data, StandardCharsets.UTF_8)).split(" ");
                if (config.length < 2) return;
                long version = Long.parseLong(config[0], 16);
                if (configVersion == -1) {
                    configVersion = version;
                    return;
                }
                if (version <= configVersion) return;
                configVersion = version;
                String hosts = config[1];
                timer.schedule(() -> {
                    try {
                        zk.updateServerList(hosts);
                        updates.incrementAndGet();
                    } catch (Exception e) {
                        e.printStackTrace();
                    }
                }, ThreadLocalRandom.current().nextInt(1000), TimeUnit.MILLISECONDS);
            }, null);
        }
    }

    public static void main(String[] args) throws Exception {
        out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        System.setOut(System.err);
        String connect = args[0];
        int count = Integer.parseInt(args[1]);
        int timeoutMs = Integer.parseInt(args[2]);
        String path = args[3];
        ScheduledExecutorService timer = Executors.newScheduledThreadPool(2, runnable -> {
            Thread thread = new Thread(runnable, "follow");
            thread.setDaemon(true);
            return thread;
        });
        List<Follower> followers = new ArrayList<>();
        for (int index = 0; index < count; index++) {
            Follower follower = new Follower(timer);
            follower.zk = new ZooKeeper(connect, timeoutMs, follower);
            followers.add(follower);
        }
        StringBuilder ids = new StringBuilder();
        for (int index = 0; index < count; index++) {
            Follower follower = followers.get(index);
            if (!follower.connected.await(30, TimeUnit.SECONDS)) throw new IllegalStateException("no connection");
            follower.zk.create(path + "/java-" + index, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
            follower.readConfig();
            if (index > 0) ids.append(',');
            ids.append('"').append(Long.toHexString(follower.zk.getSessionId())).append('"');
        }
        out.println("{\"event\":\"ready\",\"sessions\":[" + ids + "]}");
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (!line.trim().equals("report")) continue;
                StringBuilder disconnects = new StringBuilder();
                StringBuilder expired = new StringBuilder();
                StringBuilder updates = new StringBuilder();
                for (int index = 0; index < count; index++) {
                    String comma = index > 0 ? "," : "";
                    disconnects.append(comma).append(followers.get(index).disconnects.get());
                    expired.append(comma).append(followers.get(index).expired.get());
                    updates.append(comma).append(followers.get(index).updates.get());
                }
                out.println("{\"event\":\"report\",\"disconnects\":[" + disconnects + "],\"expired\":[" + expired
                        + "],\"updates\":[" + updates + "]}");
            }
        }
        for (Follower follower : followers) {
            try { follower.zk.close(100); } catch (Exception ignored) { }
        }
        Runtime.getRuntime().halt(0);
    }
}
