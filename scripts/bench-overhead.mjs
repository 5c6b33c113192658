// `npm run bench:overhead`: the cost of authentication and rate limiting. The same load (autocannon,
// fixed connections and duration) goes to /health and to an authenticated cheap route
// (GET /api/v1/rate-limit, with the account's limits raised for the run); prints requests/s and
// p50/p99 latency of each and the throughput ratio. Target: authenticated >= 60% of /health.
// Then the workerd CPU each route costs per request (utime + stime of the dev server's workerd
// processes over a fixed number of requests, median of 3 rounds): unlike requests/s under a fixed
// load, it holds steady on a machine shared with other work.
import autocannon from "autocannon";
import { fixedLoad, provisionBenchAccount } from "./lib/bench-tools.mjs";
import { startDevServer, workerdCpuMs } from "./lib/dev-server.mjs";

const CONNECTIONS = 20;
const DURATION_S = 10;

const CPU_REQUESTS = 1500;

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
  console.log(`authenticated / health throughput: ${(ratio * 100).toFixed(1)}% (target >= 85%, issue 27)`);
  console.log(`load: ${CONNECTIONS} connections, ${DURATION_S} s per route, after a ${DURATION_S} s warm-up`);

  const cpu = Object.fromEntries(Object.keys(routes).map((name) => [name, []]));
  for (let round = 0; round < 3; round += 1) {
    for (const [name, route] of Object.entries(routes)) {
      const before = workerdCpuMs(server.pid);
      const result = await fixedLoad(route.url, CPU_REQUESTS, route.headers);
      cpu[name].push((workerdCpuMs(server.pid) - before) / result["2xx"]);
    }
  }
  const median = (values) => [...values].sort((a, b) => a - b)[1];
  for (const [name, values] of Object.entries(cpu)) {
    console.log(`${name.padEnd(20)} workerd CPU per request: median ${median(values).toFixed(2)} ms (${values.map((v) => v.toFixed(2)).join(", ")})`);
  }
  const cpuRatio = median(cpu["/health"]) / median(cpu["/api/v1/rate-limit"]);
  console.log(`authenticated / health requests per CPU second: ${(cpuRatio * 100).toFixed(1)}% (${CPU_REQUESTS} requests per route and round, 3 rounds)`);
} finally {
  await server.stop();
}
