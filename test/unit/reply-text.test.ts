/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import { parseMessage } from "../../src/mail/parsed";
import { replyText } from "../../src/replies/reply-text";

const plain = (text: string) => replyText({ text, html: null });

const ORIGINAL = "Hi there,\n\nWould you have 15 minutes this week?\n\nDana";
const quoted = (text: string) =>
  text
    .split("\n")
    .map((line) => `> ${line}`)
    .join("\n");

describe("replyText: attribution lines", () => {
  const cases: [string, string][] = [
    ["English", "On Mon, Mar 2, 2026 at 9:00 AM Dana Reyes <dana@outreach.example.com> wrote:"],
    ["English, wrapped by Gmail", "On Mon, Mar 2, 2026 at 9:00 AM Dana Reyes <\ndana@outreach.example.com> wrote:"],
    ["Apple Mail", "On 2 Mar 2026, at 09:00, Dana Reyes <dana@outreach.example.com> wrote:"],
    ["German", "Am Mo., 2. März 2026 um 09:00 Uhr schrieb Dana Reyes <dana@outreach.example.com>:"],
    ["German, Thunderbird", "Am 02.03.26 um 09:00 schrieb Dana Reyes:"],
    ["French", "Le lun. 2 mars 2026 à 09:00, Dana Reyes <dana@outreach.example.com> a écrit :"],
    ["Spanish", "El lun, 2 mar 2026 a las 9:00, Dana Reyes (<dana@outreach.example.com>) escribió:"],
    ["Italian", "Il giorno lun 2 mar 2026 alle ore 09:00 Dana Reyes <dana@outreach.example.com> ha scritto:"],
    ["Dutch", "Op ma 2 mrt 2026 om 09:00 schreef Dana Reyes <dana@outreach.example.com>:"],
    ["Portuguese", "Em seg., 2 de mar. de 2026 às 09:00, Dana Reyes <dana@outreach.example.com> escreveu:"],
  ];
  for (const [name, attribution] of cases) {
    it(`cuts at the ${name} form`, () => {
      expect(plain(`Yes, Tuesday works.\n\nSam\n\n${attribution}\n\n${quoted(ORIGINAL)}`)).toBe("Yes, Tuesday works.\n\nSam");
    });
  }

  it("cuts an attribution even when the history below it is not quoted", () => {
    expect(plain(`Sure.\n\nOn Mon, 2 Mar 2026 at 09:00, Dana wrote:\n\n${ORIGINAL}`)).toBe("Sure.");
  });

  it("finds a bottom-posted answer below the quote", () => {
    expect(plain(`On Mon, 2 Mar 2026 at 09:00, Dana wrote:\n${quoted(ORIGINAL)}\n\nYes, Tuesday works.\n\n-- \nSam`)).toBe("Yes, Tuesday works.");
    expect(plain(`Dana Reyes wrote:\n${quoted(ORIGINAL)}\n\nAgreed.\n\nOn Sun, 1 Mar 2026, Sam wrote:\nolder history`)).toBe("Agreed.");
    expect(plain(`On Mon, 2 Mar 2026 at 09:00, Dana wrote:\n${quoted(ORIGINAL)}`)).toBe("");
  });

  it("cuts a bare '<name> wrote:' only when quoted lines follow it", () => {
    expect(plain(`Fine by me.\n\nDana Reyes wrote:\n${quoted(ORIGINAL)}`)).toBe("Fine by me.");
    expect(plain("My manager wrote:\nthe budget is approved.")).toBe("My manager wrote:\nthe budget is approved.");
  });
});

describe("replyText: separators and header blocks", () => {
  it("cuts at -----Original Message----- and its translations", () => {
    for (const rule of ["-----Original Message-----", "-----Ursprüngliche Nachricht-----", "-----Message d'origine-----", "---------- Forwarded message ---------"]) {
      expect(plain(`Thanks, see below.\n\n${rule}\nFrom: Dana\nSubject: Hi\n\n${ORIGINAL}`), rule).toBe("Thanks, see below.");
    }
  });

  it("cuts at Outlook's From/Sent/To/Subject block, with the rule of underscores above it", () => {
    const text = `Not now, thanks.\n\n________________________________\nFrom: Dana Reyes <dana@outreach.example.com>\nSent: Monday, March 2, 2026 9:00 AM\nTo: Lead <lead@example.org>\nSubject: Quick question\n\n${ORIGINAL}`;
    expect(plain(text)).toBe("Not now, thanks.");
  });

  it("cuts at the localised Outlook blocks (Von/Gesendet, De/Envoyé, bold desktop form)", () => {
    const blocks = [
      "Von: Dana Reyes <dana@outreach.example.com>\nGesendet: Montag, 2. März 2026 09:00\nAn: Lead\nBetreff: Frage",
      "De : Dana Reyes <dana@outreach.example.com>\nEnvoyé : lundi 2 mars 2026 09:00\nÀ : Lead\nObjet : Question",
      "*From:* Dana Reyes <dana@outreach.example.com>\n*Sent:* Monday, March 2, 2026 9:00 AM\n*To:* Lead\n*Subject:* Quick question",
    ];
    for (const block of blocks) expect(plain(`Gern.\n\n${block}\n\n${ORIGINAL}`), block).toBe("Gern.");
  });

  it("keeps a line that starts with 'From:' when no header block follows", () => {
    expect(plain("From: the team at Acme, thanks!\nWe'll be in touch.")).toBe("From: the team at Acme, thanks!\nWe'll be in touch.");
  });
});

describe("replyText: quoting and signatures", () => {
  it("drops >-quoted runs and keeps the answers between them", () => {
    const text = "> Would you have 15 minutes this week?\n\nNot this week.\n\n> How do you onboard customers?\n>> nested\n\nWith a spreadsheet.";
    expect(plain(text)).toBe("Not this week.\n\nWith a spreadsheet.");
  });

  it("cuts at the '-- ' signature delimiter, with or without its trailing space", () => {
    expect(plain("Happy to chat.\n\n-- \nPriya Nair\nHead of Ops")).toBe("Happy to chat.");
    expect(plain("Happy to chat.\n--\nPriya")).toBe("Happy to chat.");
  });

  it("never empties a message that is all quote-free text", () => {
    expect(plain("-- \nPriya Nair\nHead of Ops")).toBe("-- \nPriya Nair\nHead of Ops");
    expect(plain("  Just one line.  ")).toBe("Just one line.");
    expect(plain("Line one\r\nLine two\r\n")).toBe("Line one\nLine two");
  });
});

describe("replyText: HTML", () => {
  it("drops Gmail's gmail_quote container when there is only HTML", async () => {
    const raw = [
      "From: Lead <lead@example.org>",
      "To: dana@outreach.example.com",
      "Subject: Re: Quick question",
      "Content-Type: text/html; charset=utf-8",
      "",
      '<div dir="ltr">Thursday works &amp; so does Friday.<div><br></div><div>Lucía</div></div><br>' +
        '<div class="gmail_quote gmail_quote_container"><div dir="ltr" class="gmail_attr">El lun, 2 mar 2026, Dana escribió:<br></div>' +
        '<blockquote class="gmail_quote">Would you have 15 minutes?</blockquote></div>',
    ].join("\r\n");
    const message = await parseMessage(raw);
    expect(replyText(message)).toBe("Thursday works & so does Friday.\n\nLucía");
  });

  it("drops Apple Mail's cite blockquote and Outlook's divRplyFwdMsg", () => {
    expect(replyText({ text: "", html: '<div>Yes.</div><blockquote type="cite"><div>On 2 Mar, Dana wrote:</div>Hi</blockquote>' })).toBe("Yes.");
    expect(
      replyText({ text: "", html: '<p>Sounds good.</p><hr><div id="divRplyFwdMsg"><b>From:</b> Dana<br><b>Sent:</b> Monday<br><b>Subject:</b> Hi</div><div>Hi there</div>' }),
    ).toBe("Sounds good.");
  });

  it("reads an HTML answer written below the quote container from the text", () => {
    expect(
      replyText({
        text: "On Mon, Dana wrote:\n> Would you have 15 minutes?\n\nYes I would.",
        html: '<div class="gmail_quote">On Mon, Dana wrote:<blockquote>Would you have 15 minutes?</blockquote></div><div>Yes I would.</div>',
      }),
    ).toBe("Yes I would.");
  });

  it("converts HTML without a quote container whole", () => {
    expect(replyText({ text: "", html: "<p>Line one</p><p>Line <b>two</b></p>" })).toBe("Line one\n\nLine two");
  });
});

describe("replyText over the human fixtures", () => {
  const corpus = import.meta.glob<string>("../fixtures/replies/human/*.eml", { query: "?raw", import: "default", eager: true });
  // Each reply's own words: what must survive, and a line of the history that must not.
  const expected: Record<string, [string, string | null]> = {
    "gmail-on-wrote": ["Sounds good, let's talk Tuesday at 10am PT.\n\nSam", "Would you have"],
    "was-out-of-office": ["Hi Dana,\n\nSorry for the late reply, I was out of the office last week. Yes, happy to talk - how about Thursday?\n\nJordan", "Original Message"],
    "forward-to-colleague": ["Hi Dana, I'm forwarding this to my colleague Max who handles onboarding.\n\nKatrin", "Forwarded"],
    "outlook-de-urlaub": ["Hallo Frau Reyes,\n\nich war im Urlaub und bin erst seit heute wieder im Büro. Gerne können wir nächste Woche sprechen.\n\nViele Grüße\nJonas Schmidt", "Gesendet"],
    "outlook-fr-conges": ["Bonjour Dana,\n\nJe rentre de congés, désolée pour le délai. Je suis disponible jeudi après-midi.\n\nCordialement,\nClaire", "Envoyé"],
    "spanish-vacaciones": ["Hola Dana,\n\nacabo de volver de vacaciones. Me interesa, ¿hablamos el martes?\n\nJavier", "escribió"],
    "italian-ha-scritto": ["Ciao Dana,\nsono appena rientrata dalle ferie. Possiamo sentirci mercoledì?\n\nGiulia", "ha scritto"],
    "dutch-schreef": ["Hoi Dana,\n\nIk was afwezig, maar nu terug. Stuur maar een uitnodiging voor vrijdag.\n\nPieter", "schreef"],
    "portuguese-escreveu": ["Olá Dana,\n\nVoltei de férias ontem. Podemos falar na sexta?\n\nAna", "escreveu"],
    "apple-mail-html-cite": ["Yes, next week works. I'm away on holiday until Friday though.\n\nRiley", "wrote"],
    "office365-headers": ["Hi Dana,\n\nThanks for reaching out. We're not looking at this until Q3, I'm afraid.\n\nOlivia", "____"],
    "signature-only-delimiter": ["Happy to chat. Tuesday 3pm IST works.", "Head of Operations"],
    "interleaved-quotes": ["Not this week, I was on vacation. Next week is fine.\n\nWe use a spreadsheet today, honestly.\n\nMike", "Would you have"],
    "gmail-html-only": ["¡Claro! El jueves me viene bien.\n\nLucía", "escribió"],
    "yahoo-html-quoted": ["Please send me more details by email.", "wrote"],
    "outlook-mac-reply": ["Hi Dana, let's do Monday. I'll be out of office on Friday.\n\nMarco", "Subject"],
    "thunderbird-short-attribution": ["Hi Dana, we can talk after my holidays, from 13 July on.\n\nJoão", "wrote"],
    "colleague-replies-for-lead": ["Hello Dana, Katrin is on leave this month, so I'm answering for her: we'd like a call next week.\n\nMax Braun", "schrieb"],
    "not-interested-one-liner": ["Not interested, please remove me from your list.", null],
  };
  for (const [name, [text, gone]] of Object.entries(expected)) {
    it(name, async () => {
      const raw = corpus[`../fixtures/replies/human/${name}.eml`];
      expect(raw, name).toBeDefined();
      const result = replyText(await parseMessage(raw!));
      expect(result).toBe(text);
      if (gone) expect(result).not.toContain(gone);
    });
  }
});
