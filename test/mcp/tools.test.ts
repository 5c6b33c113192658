import { describe, expect, it } from "vitest";
import { apiTools, ArgumentError, fallbackName, inlineRefs, routeCallOf, type ApiOperation, type OpenApiDocument } from "../../src/mcp/tools";

const operation = (overrides: Partial<ApiOperation>): ApiOperation => ({
  method: "GET",
  path: "/api/v1/campaigns/{campaign_id}",
  pathParams: ["campaign_id"],
  queryParams: [],
  body: "none",
  bodyRequired: false,
  ...overrides,
});

describe("tool arguments to a REST request", () => {
  it("fills the path, repeats array query values and leaves absent ones out", () => {
    const call = routeCallOf(operation({ queryParams: ["limit", "ids", "absent"] }), { campaign_id: 12, limit: 5, ids: [1, 2] });
    expect(call.path).toBe("/api/v1/campaigns/12");
    expect(call.query?.toString()).toBe("limit=5&ids=1&ids=2");
    expect(call.body).toBeUndefined();
  });

  it("keeps a path value inside its segment: slashes encoded, dot segments refused (never a walk to another route)", () => {
    const path = routeCallOf(operation({}), { campaign_id: "1/leads?x=1" }).path;
    expect(new URL(path, "http://x").pathname).toBe("/api/v1/campaigns/1%2Fleads%3Fx%3D1");
    for (const dots of [".", ".."]) expect(() => routeCallOf(operation({}), { campaign_id: dots })).toThrow(new ArgumentError(`Not a path value: ${dots}`));
    expect(routeCallOf(operation({}), { campaign_id: "..." }).path).toBe("/api/v1/campaigns/...");
  });

  it("sends a flat body from the remaining arguments, none when optional and empty, {} when required and empty", () => {
    const flat = operation({ method: "POST", body: "flat" });
    expect(routeCallOf(flat, { campaign_id: 1, name: "x", client_id: null }).body).toEqual({ name: "x", client_id: null });
    expect(routeCallOf(flat, { campaign_id: 1 }).body).toBeUndefined();
    expect(routeCallOf({ ...flat, bodyRequired: true }, { campaign_id: 1 }).body).toEqual({});
    expect(routeCallOf(operation({ method: "POST", body: "nested" }), { campaign_id: 1, body: [{ seq_number: 1 }] }).body).toEqual([{ seq_number: 1 }]);
  });

  it("refuses a missing path parameter and arguments the operation has no place for", () => {
    expect(() => routeCallOf(operation({}), {})).toThrow(new ArgumentError("Missing required argument: campaign_id"));
    expect(() => routeCallOf(operation({ body: "nested" }), { campaign_id: 1, name: "x" })).toThrow("Unknown argument(s): name");
  });
});

describe("tools from the document", () => {
  it("names an operation without an operationId by method and path, within 64 characters", () => {
    expect(fallbackName("get", "/api/v1/campaigns/{campaign_id}/leads")).toBe("get_campaigns_campaign_id_leads");
    expect(fallbackName("post", "/api/v1/campaigns/{campaign_id}/leads/{email_lead_map_id}/manual-complete")).toBe("post_campaigns_leads_manual_complete");
  });

  it("prefers the operationId, and inlines $refs (a recursive schema is refused, not looped on)", () => {
    const document: OpenApiDocument = {
      paths: {
        "/api/v1/things": { post: { operationId: "createThing", requestBody: { required: true, content: { "application/json": { schema: { $ref: "#/components/schemas/Thing" } } } } } },
        "/health": { get: {} },
      },
      components: { schemas: { Thing: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } } },
    };
    const [tool, ...others] = apiTools(document);
    expect(others).toEqual([]);
    expect(tool?.tool).toMatchObject({ name: "createThing", inputSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } });
    expect(() => inlineRefs({ $ref: "#/components/schemas/Node" }, { Node: { type: "object", properties: { next: { $ref: "#/components/schemas/Node" } } } })).toThrow(/Recursive/);
  });
});
