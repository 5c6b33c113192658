import { api, must, session, type Session } from "../api";
import { Badge, Failed, Loading, Section, useAction, useLoad, when } from "../ui";

export default function Sessions() {
  const list = useLoad(async () => (await must(api.GET("/api/v1/sessions"))).data as Session[], []);
  const [revoke] = useAction(async (s: Session) => {
    await must(api.DELETE("/api/v1/sessions/{session_id}", { params: { path: { session_id: s.id } } }));
    if (s.current) {
      session.value = null;
      return "Signed out";
    }
    await list.reload(true);
    return "Session revoked";
  });
  return (
    <>
      <h1>Sessions</h1>
      <Section title="Signed-in browsers">
        <p class="muted small">Each session acts as the API key it was opened with. Sessions end 12 hours after their last use, 7 days after sign-in, or when revoked here.</p>
        {list.error && <Failed error={list.error} />}
        {!list.data ? (
          <Loading what="sessions" />
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col">Browser</th>
                  <th scope="col">Signed in</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Expires</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((s) => (
                  <tr key={s.id}>
                    <td>
                      {s.key_hint} {s.kind === "client" && <span class="small muted">client {s.client_id}</span>} {s.current && <Badge tone="good">this browser</Badge>}
                    </td>
                    <td class="small break">{s.user_agent ?? "—"}</td>
                    <td>{when(s.created_at)}</td>
                    <td>{when(s.last_seen_at)}</td>
                    <td>{when(s.expires_at)}</td>
                    <td>
                      <button type="button" onClick={() => revoke(s)}>
                        {s.current ? "Sign out" : `Revoke session ${s.id}`}
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Section>
    </>
  );
}
