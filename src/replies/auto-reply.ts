import { header, type ParsedMessage } from "../mail/parsed";
import { replyText } from "./reply-text";
import { parseReturnDate } from "./return-date";

/**
 * Whether a message is a machine's answer (autoReply) and, among those, one saying the person is
 * away (outOfOffice), with the return date it states. Out-of-office needs the machine evidence (a
 * header or a responder's subject prefix) and words of absence, or a subject that is itself an
 * out-of-office marker: a person who replies and mentions a holiday is still a reply. Delivery
 * status notifications are neither (bounce.ts reads them).
 */
interface AutoReplyVerdict {
  autoReply: boolean;
  outOfOffice: boolean;
  /** What decided it, for logs and support: e.g. "auto-submitted: auto-replied; text: out of the office". */
  reason: string | null;
  /** 00:00 UTC of the stated return day, epoch ms. */
  returnsAt: number | null;
}

// Prefixes automatic responders put before the original subject.
const AUTO_SUBJECT =
  /^\s*(?:auto(?:matic|matische|matisch|matique|mática|matica|mático|matico)?[\s_-]*(?:reply|response|respon[sd]e?|antwort|antwoord|answer|reposta|resposta|respuesta|risposta|réponse|reponse)|auto(?:reply|response|responder|risposta|antwort)|autorespons|réponse automatique|reponse automatique|automatische antwort|respuesta automática|respuesta automatica|risposta automatica|automatisch antwoord|resposta automática|resposta automatica|odpowiedź automatyczna|auto)\s*:/iu;

// Subjects that are themselves out-of-office notices: the marker opens the subject, bracketed or
// followed by a separator, the end, or a word of time ("Out of office until 14 April"), so that
// "On vacation next week?" from a person is not one.
const OOO_MARKERS =
  "out of (?:the )?office|ooo|away from (?:the )?office|on vacation|on holiday|on leave|vacation reply|vacation response|" +
  "abwesenheitsnotiz|abwesenheitsmeldung|abwesenheit|abwesend|nicht im büro|außer haus|ausser haus|urlaubsbedingt abwesend|" +
  "absence du bureau|absente? du bureau|absente?|en congés?|" +
  "fuera de (?:la )?oficina|ausencia|ausente|" +
  "fuori ufficio|fuori sede|assente|" +
  "afwezig(?:heid)?|niet op kantoor|buiten kantoor|" +
  "fora do escritório|fora do escritorio|ausência|de férias";
const OOO_SUBJECT = new RegExp(
  `^\\s*(?:\\[(?:${OOO_MARKERS})\\]|(?:${OOO_MARKERS})(?=\\s*(?:[:\\-–(|]|$)|\\s+(?:until|till|through|from|bis|vom|ab|jusqu|du|hasta|desde|del|fino|dal|tot|van|vanaf|até|de)(?!\\p{L})))`,
  "iu",
);

// Words of absence in the body or subject, by language.
const ABSENCE: RegExp[] = [
  // English
  /\bout of (?:the )?office\b/i,
  /\b(?:i am|i'm|i’m|i will be|i'll be|i’ll be|i shall be|currently)\s+(?:currently\s+|now\s+)?(?:away|out|off|on (?:annual |parental |maternity |paternity |sick |medical |study )?(?:leave|vacation|holiday|holidays|pto|sabbatical|a business trip|business travel)|traveling|travelling|on the road|at a conference|attending|unavailable|not available|not in the office|outside the office)\b/i,
  /\baway from (?:the office|my desk|my email|the desk|email)\b/i,
  /\b(?:limited|no|intermittent) access to (?:e-?mail|my e-?mail|email|my inbox)\b/i,
  /\b(?:upon|on) my return\b/i,
  /\bback in the office\b/i,
  /\b(?:annual|parental|maternity|paternity) leave\b/i,
  // German
  /nicht im büro|außer haus|ausser haus|abwesenheit|abwesend|im urlaub|in urlaub|urlaubsbedingt|nicht erreichbar|nicht im hause|elternzeit|dienstreise|nach meiner rückkehr|wieder im büro|wieder erreichbar/i,
  // French
  /absente? du bureau|hors du bureau|je suis absent|je serai absent|en congés?(?!\p{L})|en vacances|de retour le|à mon retour|pas au bureau|en déplacement|accès limité/iu,
  // Spanish
  /fuera de (?:la )?oficina|estoy de vacaciones|de vacaciones|estaré ausente|estoy ausente|me encuentro fuera|a mi regreso|acceso limitado|estaré de vuelta|regresaré el/i,
  // Italian
  /fuori ufficio|fuori sede|sono in ferie|in ferie|sarò assente|sono assente|al mio rientro|rientrerò|non sono in ufficio|accesso limitato/i,
  // Dutch
  /afwezig|met vakantie|op vakantie|niet op kantoor|buiten kantoor|weer aanwezig|na mijn terugkeer|beperkt toegang/i,
  // Portuguese
  /fora do escritório|fora do escritorio|de férias|estou ausente|estarei ausente|no meu regresso|no meu retorno|estarei de volta|acesso limitado/i,
];

// Headers of vacation responders that say "away" by themselves.
function vacationHeader(message: ParsedMessage): string | null {
  for (const { key, value } of message.headers) {
    if (key === "x-apple-action" && /vacation/i.test(value)) return `${key}: ${value}`;
    if (key === "auto-submitted" && /vacation|\booo\b|out.of.office/i.test(value)) return `${key}: ${value}`;
    // Exchange's out-of-office message class, in whichever header a gateway copies it to, and its bare
    // "OOF" markers; headers naming "suppress" only ask others not to send one.
    if (/^\s*ipm\.note\.rules\.(?:external)?ooftemplate\.microsoft\s*$/i.test(value)) return `${key}: ${value}`;
    if (key.startsWith("x-ms-exchange-") && !key.includes("suppress") && /^\s*oof\s*$/i.test(value)) return `${key}: ${value}`;
    if (key === "x-kopano-vacation") return `${key}: ${value}`;
  }
  return null;
}

// Headers that mark any machine-made answer.
function automaticHeader(message: ParsedMessage): string | null {
  for (const { key, value } of message.headers) {
    const v = value.trim();
    if (key === "auto-submitted" && !/^no\b/i.test(v)) return `${key}: ${v}`;
    if ((key === "x-autoreply" || key === "x-autorespond" || key === "x-autoresponder") && !/^no\b/i.test(v)) return `${key}: ${v}`;
    if (key === "x-auto-response-suppress" && /\b(?:all|oof)\b/i.test(v)) return `${key}: ${v}`;
    if (key === "precedence" && /^(?:auto_reply|bulk|junk)\b/i.test(v)) return `${key}: ${v}`;
    // Exchange stamps these on what its mailbox rules (out-of-office among them) and agents generate.
    if (key === "x-ms-exchange-inbox-rules-loop" || key === "x-ms-exchange-generated-message-source") return `${key}: ${v}`;
    if ((key === "x-mailer" || key === "user-agent") && /vacation|auto-?reply|auto-?respond|autoresponder|out of office/i.test(v)) return `${key}: ${v}`;
    if (key === "return-path" && /^<\s*>$/.test(v)) return "return-path: <>";
  }
  return null;
}

// Delivery status notifications, standard and the usual non-standard ones.
function isBounce(message: ParsedMessage): boolean {
  const type = header(message, "content-type") ?? "";
  if (/multipart\/report/i.test(type) && /report-type\s*=\s*"?delivery-status/i.test(type)) return true;
  if (message.parts.some((part) => /^message\/(?:global-)?delivery-status$/i.test(part.mimeType))) return true;
  const fromDaemon = /^(?:mailer-daemon|postmaster|mail-daemon)@/i.test(message.from ?? "");
  return (
    fromDaemon ||
    /^\s*(?:undeliver(?:able|ed)|delivery (?:status notification|has failed|failure)|returned mail|mail delivery (?:failed|failure|system)|failure notice|non[- ]?delivery|unzustellbar|non remis|no se puede entregar)/i.test(
      message.subject,
    )
  );
}

const NONE: AutoReplyVerdict = { autoReply: false, outOfOffice: false, reason: null, returnsAt: null };

export function classifyAutoReply(message: ParsedMessage, receivedAt: number): AutoReplyVerdict {
  if (isBounce(message)) return NONE;
  const subject = message.subject.trim();
  const vacation = vacationHeader(message);
  const automatic = vacation ?? automaticHeader(message);
  const oooSubject = OOO_SUBJECT.test(subject) ? `subject: ${subject}` : null;
  const autoSubject = AUTO_SUBJECT.test(subject) ? `subject: ${subject}` : null;
  const evidence = automatic ?? autoSubject ?? oooSubject;
  if (!evidence) return NONE;

  // The answer's own words: a responder that quotes the campaign email must not be judged on it.
  const body = replyText(message);
  const words = ABSENCE.find((pattern) => pattern.test(subject) || pattern.test(body));
  const away = vacation ?? oooSubject ?? (words ? `text: ${words.exec(subject)?.[0] ?? words.exec(body)?.[0]}` : null);
  const reasons = [evidence, away].filter((r, i, all): r is string => r !== null && all.indexOf(r) === i);
  const outOfOffice = away !== null;
  return {
    autoReply: true,
    outOfOffice,
    reason: reasons.join("; "),
    returnsAt: outOfOffice ? parseReturnDate(`${subject}\n\n${body}`, receivedAt) : null,
  };
}
