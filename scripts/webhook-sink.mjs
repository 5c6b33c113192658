// `npm run webhook-sink [-- <whsec_secret>]`: a local webhook receiver on http://127.0.0.1:8790
// (PORT to change) that prints each delivery and whether its signature verifies.
import { startReceiver } from "./lib/webhook-receiver.mjs";

const secret = process.argv[2] ?? process.env.WEBHOOK_SECRET;
const port = Number(process.env.PORT ?? 8790);

await startReceiver({
  port,
  secret,
  onDelivery: ({ headers, payload, verified }) => {
    const check = verified === null ? "signature not checked (no secret given)" : verified ? "signature OK" : "SIGNATURE MISMATCH";
    console.log(`${new Date().toISOString()}  ${headers["webhook-id"]}  ${payload?.event_type ?? "?"}  ${payload?.sl_lead_email ?? ""}  ${check}`);
    console.log(`  ${JSON.stringify(payload)}`);
  },
});
console.log(`Webhook sink listening on http://127.0.0.1:${port}/ ${secret ? "(verifying signatures)" : "(pass the webhook's secret to verify signatures)"}`);
