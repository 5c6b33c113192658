import { createRoute, z } from "@hono/zod-openapi";
import { database } from "../platform/db";
import { API_KEY_SECURITY, createRouter, errorResponses, json } from "../platform/openapi";
import { offeredProviders } from "./seed-store";

const Region = z
  .object({
    region_id: z.string(),
    region_name: z.string(),
    groups: z.array(
      z.object({
        group_id: z.string(),
        group_name: z.string(),
        providers: z.array(
          z.object({
            provider_id: z.string(),
            provider_num: z.number().int().openapi({ description: "Salvo's stable integer for the provider; accepted wherever provider ids are" }),
            provider_name: z.string(),
            seed_email: z.string(),
          }),
        ),
      }),
    ),
  })
  .openapi("ProviderRegion");

const catalogueRoute = createRoute({
  method: "get",
  path: "/api/v1/spam-test/seed/providers",
  operationId: "listSeedProviders",
  tags: ["Deliverability"],
  summary: "The provider catalogue: regions, their provider groups, and the providers",
  description: "Only providers with at least one seed mailbox (registered by the operator) are offered; `seed_email` is the provider's first seed.",
  security: API_KEY_SECURITY,
  responses: { 200: json(z.array(Region), "Regions"), ...errorResponses(401, 404, 429) },
});

export const providerRoutes = createRouter();

providerRoutes.openapi(catalogueRoute, async (c) => {
  const rows = await offeredProviders(database(c.env.DB));
  const regions = new Map<string, z.infer<typeof Region>>();
  for (const row of rows) {
    const region = regions.get(row.regionId) ?? { region_id: row.regionId, region_name: row.regionName, groups: [] };
    regions.set(row.regionId, region);
    let group = region.groups.find((g) => g.group_id === row.groupId);
    if (!group) region.groups.push((group = { group_id: row.groupId, group_name: row.groupName, providers: [] }));
    group.providers.push({ provider_id: row.id, provider_num: row.providerNum!, provider_name: row.name, seed_email: row.seedEmail });
  }
  return c.json([...regions.values()], 200);
});
