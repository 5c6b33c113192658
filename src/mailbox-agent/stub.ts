import type { Bindings } from "../platform/env";
import { mailboxObject } from "../mailboxes/wake";
import type { MailboxSender } from "./mailbox.do";

/** A mailbox's agent with its whole interface (passes on a given clock: the operator route and tests). */
export function senderStub(env: Bindings, mailboxId: number): DurableObjectStub<MailboxSender> {
  return mailboxObject(env, mailboxId) as unknown as DurableObjectStub<MailboxSender>;
}
