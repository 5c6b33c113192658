// `npm run bench:overhead`: the cost of authentication and rate limiting. The same load (autocannon,
// fixed connections and duration) goes to /health and to an authenticated cheap route
// (GET /api/v1/rate-limit, with the account's limits raised for the run), each route warmed up on its
// own and then run in three rounds in alternating order; prints each route's median requests/s with
// its p50/p99 latency, and the throughput ratio. Target (issue 27): authenticated >= 85% of /health.
// Then the workerd CPU each route costs per request (utime + stime of the dev server's workerd
// processes over a fixed number of requests, median of 3 rounds): unlike requests/s under a fixed
// load, it holds steady on a machine shared with other work.
import autocannon from "autocannon";
import { fixedLoad, provisionBenchAccount } from "./lib/bench-tools.mjs";
import { startDevServer, workerdCpuMs } from "./lib/dev-server.mjs";

const CONNECTIONS = 20;
const DURATION_S = 6;
const WARMUP_S = 5;

const CPU_REQUESTS = 1500;

function load({ url, headers = {} }, duration = DURATION_S) {
  return new Promise((resolve, reject) => {
    autocannon({ url, headers, connections: CONNECTIONS, duration }, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

const server = await startDevServer({ quiet: true });
try {
  const account = await provisionBenchAccount(server, "overhead");
  const routes = {
    "/health": { url: `${server.url}/health` },
    "/api/v1/rate-limit": { url: `${server.url}/api/v1/rate-limit`, headers: { "X-API-Key": account.api_key } },
  };
  // Each route warmed up on its own: a route first run after a warm-up of /health alone paid for
  // compiling its own path (the key gate's object, its statements) inside its measured seconds.
  for (const route of Object.values(routes)) await load(route, WARMUP_S);
  const runs = Object.fromEntries(Object.keys(routes).map((name) => [name, []]));
  const names = Object.keys(routes);
  for (let round = 0; round < 3; round += 1) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) runs[name].push(await load(routes[name]));
  }
  const middle = (results) => [...results].sort((a, b) => a.requests.average - b.requests.average)[1];
  for (const [name, results] of Object.entries(runs)) {
    const result = middle(results);
    const failures = results.reduce((sum, r) => sum + r.non2xx + r.errors, 0);
    console.log(
      `${name.padEnd(20)} ${result.requests.average.toFixed(0).padStart(6)} req/s   p50 ${result.latency.p50} ms   p99 ${result.latency.p99} ms   (rounds ${results.map((r) => r.requests.average.toFixed(0)).join(", ")}; ${failures} non-2xx/errors)`,
    );
  }
  const ratio = middle(runs["/api/v1/rate-limit"]).requests.average / middle(runs["/health"]).requests.average;
  console.log(`authenticated / health throughput: ${(ratio * 100).toFixed(1)}% (target >= 85%, issue 27)`);
  console.log(`load: ${CONNECTIONS} connections; each route warmed up ${WARMUP_S} s, then 3 rounds of ${DURATION_S} s per route in alternating order, medians`);

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
