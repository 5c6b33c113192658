// `npm run bench:overhead`: the cost of authentication and rate limiting. The same load (autocannon,
// fixed connections and duration) goes to /health and to an authenticated cheap route
// (GET /api/v1/rate-limit, with the account's limits raised for the run); prints requests/s and
// p50/p99 latency of each and the throughput ratio. Target: authenticated >= 60% of /health.
import autocannon from "autocannon";
import { provisionBenchAccount } from "./lib/bench-tools.mjs";
import { startDevServer } from "./lib/dev-server.mjs";

const CONNECTIONS = 20;
const DURATION_S = 10;

function load({ url, headers = {} }) {
  return new Promise((resolve, reject) => {
    autocannon({ url, headers, connections: CONNECTIONS, duration: DURATION_S }, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

const server = await startDevServer({ quiet: true });
try {
  const account = await provisionBenchAccount(server, "overhead");
  const routes = {
    "/health": { url: `${server.url}/health` },
    "/api/v1/rate-limit": { url: `${server.url}/api/v1/rate-limit`, headers: { "X-API-Key": account.api_key } },
  };
  await load(routes["/health"]);
  const results = {};
  for (const [name, route] of Object.entries(routes)) {
    const result = await load(route);
    const failures = result.non2xx + result.errors;
    results[name] = result.requests.average;
    console.log(
      `${name.padEnd(20)} ${result.requests.average.toFixed(0).padStart(6)} req/s   p50 ${result.latency.p50} ms   p99 ${result.latency.p99} ms   (${failures} non-2xx/errors of ${result.requests.total})`,
    );
  }
  const ratio = results["/api/v1/rate-limit"] / results["/health"];
  console.log(`authenticated / health throughput: ${(ratio * 100).toFixed(1)}% (target >= 60%)`);
  console.log(`load: ${CONNECTIONS} connections, ${DURATION_S} s per route, after a ${DURATION_S} s warm-up`);
} finally {
  await server.stop();
}
