import { describe, expect, it } from "vitest";
import { addImport, importRow, listMemberCount, setImport } from "../db";
import { call, callJson, provisionAccount, fileEnv } from "../helpers";
import { continueCsvImports, runImport } from "../../src/lead-lists/import";
import type { Bindings } from "../../src/platform/env";
import { MINUTE_JOBS } from "../../src/scheduled";
import { countCsvRows, readCsvRows } from "../../src/lead-lists/csv";
import { blockListEntry, createList, listEmails } from "./fixtures";

interface Progress {
  id: number;
  state: string;
  total: number;
  processed: number;
  imported: number;
  duplicates: number;
  blocked: number;
  invalid: number;
  finished_at: string | null;
}

async function progress(apiKey: string, listId: number, importId: number) {
  return callJson<{ ok: boolean; data: Progress }>(`/api/v1/lead-list/${listId}/imports/${importId}`, { apiKey });
}

/** Polls the import until it ends (the request's waitUntil works on it in the background). */
async function finished(apiKey: string, listId: number, importId: number): Promise<Progress> {
  for (let i = 0; i < 100; i++) {
    const { body } = await progress(apiKey, listId, importId);
    if (body.data.state === "done" || body.data.state === "failed") return body.data;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("the import did not finish");
}

describe("CSV import into a lead list", () => {
  it("reads RFC 4180: quoted commas, doubled quotes, CRLF, quoted newlines, a BOM, blank lines", () => {
    const text = '\uFEFFemail,note\r\n"a@x.com","say ""hi"", ok"\r\n\r\nb@x.com,"two\nlines"\n';
    expect(readCsvRows(text, 0, 10).rows).toEqual([["email", "note"], ["a@x.com", 'say "hi", ok'], ["b@x.com", "two\nlines"]]);
    const header = readCsvRows(text, 0, 1);
    expect(countCsvRows(text, header.next)).toBe(2);
  });

  it("imports a text/csv body in the background; progress is readable and counts rows once", async () => {
    const account = await provisionAccount();
    const list = await createList(account.apiKey);
    await blockListEntry(account.id, "spam@blocked.example");
    const csv = [
      "Email,First Name,Company,Favourite colour",
      'ann@example.com,Ann,"Acme, Inc",blue',
      "ANN@example.com,Ann again,,",
      "not-an-email,X,,",
      "spam@blocked.example,S,,",
      "bob@example.com,,,",
    ].join("\r\n");
    const response = await call(`/api/v1/lead-list/${list}/import-csv?file_name=people.csv`, {
      method: "POST",
      apiKey: account.apiKey,
      rawBody: csv,
      headers: { "Content-Type": "text/csv" },
    });
    expect(response.status).toBe(202);
    const queued = (await response.json()) as { data: Progress & { file_name: string } };
    expect(queued.data).toMatchObject({ file_name: "people.csv", total: 5 });

    const done = await finished(account.apiKey, list, queued.data.id);
    expect(done).toMatchObject({ state: "done", total: 5, processed: 5, imported: 2, duplicates: 1, blocked: 1, invalid: 1, finished_at: expect.any(String) });
    const members = await callJson<{ data: { email: string; first_name: string | null; company_name: string | null; custom_fields: unknown }[] }>(
      `/api/v1/lead-list/${list}/leads`,
      { apiKey: account.apiKey },
    );
    expect(members.body.data[0]).toMatchObject({ email: "ann@example.com", first_name: "Ann", company_name: "Acme, Inc", custom_fields: { "Favourite colour": "blue" } });
    expect((await importRow(queued.data.id)).csv).toBeNull();
  });

  it("works through a large CSV in chunks, and the minute cron finishes what no worker holds", async () => {
    const account = await provisionAccount();
    const list = await createList(account.apiKey);
    const rows = Array.from({ length: 1300 }, (_, i) => `lead${i % 1200}@big.example,Name ${i}`);
    const { status, body } = await callJson<{ data: Progress }>(`/api/v1/lead-list/${list}/import-csv`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { csv: ["email,first_name", ...rows].join("\n"), fileName: "big.csv" },
    });
    expect(status).toBe(202);
    expect(body.data.total).toBe(1300);

    // Whatever the request's own worker leaves (it may be cut short), the cron carries on.
    expect(MINUTE_JOBS).toContain(continueCsvImports);
    if ((await importRow(body.data.id)).state !== "done") await setImport(body.data.id, { leaseUntil: new Date(0) });
    await continueCsvImports(fileEnv(), new Date());
    const done = await finished(account.apiKey, list, body.data.id);
    expect(done).toMatchObject({ state: "done", processed: 1300, imported: 1200, duplicates: 100, invalid: 0, blocked: 0 });
    expect((await listEmails(account.apiKey, list)).length).toBe(1000);
    expect(await listMemberCount(list)).toBe(1200);
  });

  it("gives up an import whose passes keep failing, saying so in its progress", async () => {
    const account = await provisionAccount();
    const list = await createList(account.apiKey);
    // A stored import whose column list no longer names an email column: every pass throws.
    const row = {
      id: await addImport({
        accountId: account.id,
        listId: list,
        fileName: "bad.csv",
        csv: "name\nAnn\n",
        columns: ["name"],
        settings: { ignoreGlobalBlockList: false, ignoreUnsubscribeList: false },
        cursor: 5,
        total: 1,
      }),
    };
    for (let pass = 1; pass <= 4; pass++) await runImport(fileEnv() as unknown as Bindings, row!.id);
    expect((await progress(account.apiKey, list, row!.id)).body.data).toMatchObject({ state: "running", error: null });
    await runImport(fileEnv() as unknown as Bindings, row!.id);
    expect((await progress(account.apiKey, list, row!.id)).body.data).toMatchObject({
      state: "failed",
      error: "The import failed 5 times and was stopped after 0 rows",
      finished_at: expect.any(String),
    });
    await runImport(fileEnv() as unknown as Bindings, row!.id);
    expect((await progress(account.apiKey, list, row!.id)).body.data.state).toBe("failed");
  });

  it("refuses a CSV without an email column (400) or without a body (422), and a foreign list's import (404)", async () => {
    const account = await provisionAccount();
    const stranger = await provisionAccount();
    const list = await createList(account.apiKey);
    const noEmail = await call(`/api/v1/lead-list/${list}/import-csv`, {
      method: "POST",
      apiKey: account.apiKey,
      rawBody: "name,phone\nAnn,1\n",
      headers: { "Content-Type": "text/csv" },
    });
    expect(noEmail.status).toBe(400);
    expect(await noEmail.json()).toEqual({ error: "The CSV needs a header row with an email column" });
    const empty = await callJson(`/api/v1/lead-list/${list}/import-csv`, { method: "POST", apiKey: account.apiKey, body: {} });
    expect(empty.status).toBe(422);

    const { body } = await callJson<{ data: Progress }>(`/api/v1/lead-list/${list}/import-csv`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { csv: "email\na@example.com\n" },
    });
    expect((await progress(stranger.apiKey, list, body.data.id)).status).toBe(404);
    const otherList = await createList(account.apiKey);
    expect((await progress(account.apiKey, otherList, body.data.id)).body).toEqual({ error: "Import not found" });
  });
});
