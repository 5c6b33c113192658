import { signal } from "@preact/signals";

/** Hash routes (`#/inbox/42`): every path stays the one static index.html, so no server route is needed. */
function current(): string[] {
  return location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
}

export const route = signal<string[]>(current());
addEventListener("hashchange", () => {
  route.value = current();
});

export function go(...parts: (string | number)[]): void {
  location.hash = `#/${parts.map((p) => encodeURIComponent(String(p))).join("/")}`;
}

export function href(...parts: (string | number)[]): string {
  return `#/${parts.map((p) => encodeURIComponent(String(p))).join("/")}`;
}
