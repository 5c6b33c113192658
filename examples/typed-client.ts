import { createSalvoClient } from "@salvo/client";

const salvo = createSalvoClient({ baseUrl: "http://127.0.0.1:8787", apiKey: process.env.SALVO_API_KEY ?? "" });

const saved = await salvo.POST("/api/v1/client/save", { body: { name: "Acme", email: "ops@acme.example" } });
if (saved.error) throw new Error(JSON.stringify(saved.error));

const key = await salvo.POST("/api/v1/client/api-key", { body: { clientId: saved.data.id, keyName: "Acme CRM" } });
if (key.error) throw new Error(JSON.stringify(key.error));
console.log(`Key for ${saved.data.name}: ${key.data.data.api_key}`);

const keys = await salvo.GET("/api/v1/client/api-key", { params: { query: { clientId: saved.data.id } } });
console.log(keys.data?.data.map((k) => `${k.key_name} ${k.api_key} ${k.status}`));

const campaign = await salvo.POST("/api/v1/campaigns/create", { body: { name: "Spring outreach", client_id: saved.data.id } });
if (campaign.error) throw new Error(JSON.stringify(campaign.error));
const stats = await salvo.GET("/api/v1/campaigns/{campaign_id}/analytics-by-date", {
  params: {
    path: { campaign_id: campaign.data.id },
    query: { start_date: "2026-11-01", end_date: "2026-11-22", time_zone: "Europe/Berlin" },
  },
});
console.log(`sent ${stats.data?.sent_count}, replies ${stats.data?.reply_count}`);
