package lit3r;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import inet.ipaddr.IPAddressString;
import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.harness.Neo4j;
import org.neo4j.harness.Neo4jBuilder;
import org.neo4j.harness.Neo4jBuilders;

/**
 * Starts a real in-process Neo4j 5 server for tests: Bolt on 127.0.0.1:PORT, auth disabled.
 * LOAD CSV is confined as in docker-compose.yml: no file:/// URLs, the import folder DIR/import,
 * and every IPv4 and IPv6 address blocked for http(s)/ftp URLs.
 * Args: --bolt-port N [--http-port M] [--pagecache BYTES] --data DIR (page cache default 64 MiB). Prints "READY bolt://127.0.0.1:N" once up;
 * stops on SIGTERM/SIGINT or when stdin closes.
 */
public final class Neo4jServer {
    public static void main(String[] args) throws Exception {
        int bolt = -1, http = -1;
        long pagecache = 64L << 20;
        Path data = null;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--bolt-port" -> bolt = Integer.parseInt(args[i + 1]);
                case "--http-port" -> http = Integer.parseInt(args[i + 1]);
                case "--data" -> data = Path.of(args[i + 1]);
                case "--pagecache" -> pagecache = Long.parseLong(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        if (bolt <= 0 || data == null) {
            System.err.println("usage: Neo4jServer --bolt-port N [--http-port M] [--pagecache BYTES] --data DIR");
            System.exit(2);
        }
        Files.createDirectories(data.resolve("import"));
        Neo4jBuilder builder = Neo4jBuilders.newInProcessBuilder(data)
                .withConfig(GraphDatabaseSettings.auth_enabled, false)
                .withConfig(GraphDatabaseSettings.pagecache_memory, pagecache)
                .withConfig(GraphDatabaseSettings.allow_file_urls, false)
                .withConfig(GraphDatabaseSettings.load_csv_file_url_root, data.resolve("import").toAbsolutePath())
                .withConfig(GraphDatabaseInternalSettings.cypher_ip_blocklist,
                        List.of(new IPAddressString("0.0.0.0/0"), new IPAddressString("::/0")))
                .withConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0) // stop in ~1 s, not 11
                .withConfig(BoltConnector.enabled, true)
                .withConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", bolt))
                .withConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", bolt));
        if (http > 0) {
            builder = builder.withConfig(HttpConnector.enabled, true)
                    .withConfig(HttpConnector.listen_address, new SocketAddress("127.0.0.1", http))
                    .withConfig(HttpConnector.advertised_address, new SocketAddress("127.0.0.1", http));
        } else {
            builder = builder.withDisabledServer();
        }
        Neo4j neo4j = builder.build();
        Runtime.getRuntime().addShutdownHook(new Thread(neo4j::close, "neo4j-shutdown"));
        System.out.println("READY bolt://127.0.0.1:" + bolt);
        System.out.flush();
        while (System.in.read() != -1) {
            // wait for stdin to close
        }
        System.exit(0); // runs the shutdown hook
    }
}
