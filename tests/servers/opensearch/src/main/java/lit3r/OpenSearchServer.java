package lit3r;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.codelibs.opensearch.runner.OpenSearchRunner;

/**
 * Test-only launcher: a real single-node OpenSearch 2.19.1 cluster with the k-NN plugin,
 * bound to 127.0.0.1, no security plugin.
 *
 * Usage: java -Xmx1g -cp 'target/classes:target/lib/*' lit3r.OpenSearchServer --http-port N --data DIR
 *
 * Prints exactly one line "READY http://127.0.0.1:N" once the cluster is yellow or green.
 * Stops on SIGTERM/SIGINT or when stdin reaches end of file.
 */
public final class OpenSearchServer {

    private OpenSearchServer() {
    }

    public static void main(final String[] args) throws Exception {
        int httpPort = -1;
        Path data = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--http-port" -> httpPort = Integer.parseInt(args[++i]);
                case "--data" -> data = Path.of(args[++i]).toAbsolutePath();
                default -> fail("unknown argument: " + args[i]);
            }
        }
        if (httpPort <= 0 || data == null) {
            fail("usage: OpenSearchServer --http-port N --data DIR");
        }
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

        final String port = Integer.toString(httpPort);
        runner.onBuild((number, settings) -> settings
                .put("network.host", "127.0.0.1")
                .put("http.port", port)
                .put("transport.port", "0")
                .put("discovery.type", "single-node")
                .put("cluster.routing.allocation.disk.threshold_enabled", false)
                .put("action.destructive_requires_name", false));
        try {
            runner.build(OpenSearchRunner.newConfigs()
                    .basePath(data.toString())
                    .numOfNode(1)
                    .clusterName("lit3r-test")
                    .pluginTypes("org.opensearch.knn.plugin.KNNPlugin"));
            runner.ensureYellow();
        } catch (final RuntimeException e) {
            e.printStackTrace();
            System.exit(1); // node threads are not daemons: exit explicitly
        }
        System.out.println("READY http://127.0.0.1:" + httpPort);
        System.out.flush();

        Thread.currentThread().join();
    }

    private static void fail(final String message) {
        System.err.println(message);
        System.exit(2);
    }
}
