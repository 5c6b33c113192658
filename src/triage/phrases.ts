/**
 * The rules stage's wording, by rule and language (English, German, French, Spanish, Italian,
 * Dutch, Portuguese: the out-of-office detector's languages). Patterns are written over the
 * normalised text of src/triage/rules.ts: lower case, accents removed (é → e, ß → ss), English
 * contractions spelled out (don't → do not, i've → i have), other apostrophes and hyphens split
 * ("l'entreprise" → "l entreprise", "opt-out" → "opt out"). `(a|b c|)` is a choice of words (an
 * empty choice makes it optional) and `*` stands for any one word. Each pattern is expanded once
 * into plain word sequences, so matching is a single pass over the words.
 *
 * Do-not-contact patterns are deliberately narrow (the rules must never assign it wrongly): a
 * request aimed at a list, a mailing or the sender, never a bare "remove" or "stop" inside a
 * sentence. `negatable` patterns are skipped when a negation opens their clause ("please do NOT
 * remove me").
 */

export type PhraseRule = "dnc" | "wrong_person" | "ooo" | "automated";

export interface PhraseGroup {
  rule: PhraseRule;
  /** Stable name, part of the rule id in provenance (`dnc.remove-me@1`). */
  name: string;
  language: "en" | "de" | "fr" | "es" | "it" | "nl" | "pt";
  negatable?: boolean;
  /** Read only in a person's reply: an out-of-office "contact my colleague" is not a wrong person. */
  humanOnly?: boolean;
  /** Read only in a machine's answer ("Ben Carter has left Litware."), too loose for a person's words ("I have left it."). */
  machineOnly?: boolean;
  patterns: string[];
}

const LIST = "(list|lists|mailing list|mailing lists|email list|e mail list|mail list|distribution list|distribution|database|db|contact list|contacts|mailing|mailings|sequence|system|crm|emails|e mails|mails)";
const YOUR = "(your|the|this|ur|all|any|all your|all of your|every|future)";

export const PHRASES: PhraseGroup[] = [
  // ---------------------------------------------------------------- do not contact
  {
    rule: "dnc",
    name: "remove-me",
    language: "en",
    negatable: true,
    patterns: [
      `(remove|delete|take|drop|erase|scrub|strike|purge) (me|us|my email|my address|my email address|my details|my data|my name|this email|this address|this email address) (from|off) ${YOUR} ${LIST}`,
      `(remove|delete|take|drop|erase) (me|us|my email|my address|my details|my data) (from|off) (your|the) (email|e mail|mailing|marketing|contact) (list|lists)`,
      `take (me|us|my email|my address) off (your|the|this|ur) (list|lists|mailing list|email list|distribution list|emails)`,
      `(please|kindly|pls|plz) (remove|delete) (me|us|my email|my address|my details|my data) $`,
      `(remove|delete) my (email|address|email address|details|data|contact details|contact information) (from|off) (your|the)`,
      `(want|wish|would like|like|need) to be (removed|taken off|deleted) (from|off) ${YOUR} ${LIST}`,
      `(i|we) (want|wish|would like|need) to be removed $`,
      `(remove|delete) (me|us) (asap|immediately|now|at once|please|right away|) $`,
    ],
  },
  {
    rule: "dnc",
    name: "unsubscribe",
    language: "en",
    negatable: true,
    patterns: [
      "(please|kindly|pls|plz) unsubscribe",
      "unsubscribe (me|us|my email|my address|this email|this address)",
      "(i|we) (want|wish|would like|need|d like|like) to unsubscribe",
      "(how|where) (do|can|could) (i|we) unsubscribe",
      `unsubscribe (me|us|) (from|off) ${YOUR} ${LIST}`,
      "(opt|opting) (me|us) out",
      "(i|we) (want|wish|would like|need) to opt out",
      `(opt|opting) out (of|from) ${YOUR} ${LIST}`,
    ],
  },
  {
    rule: "dnc",
    name: "stop-contacting",
    language: "en",
    patterns: [
      "(do not|never|please do not|please never|do not ever) (contact|email|e mail|mail|message|write to|call|spam|bother|reach out to) (me|us) (again|anymore|any more|ever|further|in future|in the future)",
      "(do not|please do not|never) (contact|email|e mail|mail|spam|bother) (me|us)",
      "(stop|quit|cease) (emailing|e mailing|mailing|contacting|spamming|messaging|sending|writing to|bothering|pestering|harassing) (me|us|my)",
      "(stop|quit) (sending|send) (me|us) (emails|e mails|email|mails|these|this|messages|marketing)",
      "(no|not) (more|further|any more|anymore) (emails|e mails|mails|contact|messages|marketing emails|sales emails|solicitations)",
      "do not want (to receive|to get|any|any more|anymore|further|more) (emails|e mails|mails|messages|these emails|your emails|emails from you)",
      "do not want to (hear|be contacted) (from you|again|anymore|any more)",
      "(do not|never) want to hear from (you|your company) (again|anymore|any more|)",
      "(i|we) (did not|never) (sign up|subscribe|opt in|ask) (for|to) (this|these|your)",
      "(i|we) (will|shall) (report|mark) (you|this|these|your emails) (as|for) spam",
      "put (me|us) on (your|the) (do not contact|do not email|suppression|no contact) list",
      "(add|put) (me|us) to (your|the) (do not contact|do not email|suppression|opt out|unsubscribe) list",
      "(cease|stop) (all|any) (contact|communication|communications|emails)",
      "leave (me|us) alone",
    ],
  },
  {
    rule: "dnc",
    name: "remove-me",
    language: "de",
    negatable: true,
    patterns: [
      "(bitte|) (entfernen|loschen|streichen|nehmen) sie (bitte|) (mich|meine adresse|meine e mail adresse|meine e mail|meine daten|meinen kontakt) (aus|von) (ihrem|ihrer|dem|der|ihren) (verteiler|verteilerliste|liste|mailingliste|datenbank|newsletter|kontaktliste|emailverteiler|e mail verteiler)",
      "(bitte|) (entfernen|loschen|streichen) sie (bitte|) (mich|meine adresse|meine e mail adresse|meine daten)",
      "(bitte|) (tragen|nehmen) sie mich (aus|von) (ihrem|ihrer|dem|der) (verteiler|liste|mailingliste|datenbank) (aus|)",
      "(bitte|) (mich|uns) (austragen|entfernen|abmelden|loschen|streichen)",
      "(meine|unsere) (daten|adresse|e mail adresse|kontaktdaten) (bitte|) (loschen|entfernen)",
      "aus (ihrem|dem|ihrer|der) (verteiler|mailverteiler|e mail verteiler|emailverteiler|liste|mailingliste|datenbank) (entfernen|nehmen|streichen|loschen|austragen)",
      "(mochte|will|mochten|wollen) (mich|) (abmelden|austragen)",
      "(vom|von ihrem|aus dem) newsletter abmelden",
    ],
  },
  {
    rule: "dnc",
    name: "stop-contacting",
    language: "de",
    patterns: [
      "(keine|keinerlei) (weiteren|weitere|) (e mails|emails|mails|nachrichten|werbung|werbemails|kontaktaufnahmen|zusendungen) mehr",
      "(keine|keinerlei) (weiteren|weitere) (e mails|emails|mails|nachrichten|werbung|werbemails|kontaktaufnahmen|zusendungen|anfragen)",
      "(kontaktieren|schreiben|mailen|anschreiben) sie (mich|uns) (bitte|) (nicht mehr|nie wieder|nicht weiter|nicht wieder)",
      "(bitte|) (nicht mehr|nie wieder) (kontaktieren|anschreiben|anrufen|mailen|schreiben)",
      "(horen|stellen) sie (auf|bitte auf|sofort auf) (mir|mich|uns) (zu schreiben|zu kontaktieren|anzuschreiben|zu mailen)",
      "(horen|hort) sie (bitte|sofort|) auf $",
      "(unterlassen sie|unterlassen) (weitere|jegliche|kunftige) (kontaktaufnahmen|kontaktaufnahme|e mails|zusendungen|werbung)",
      "widerspreche (der|jeder) (nutzung|verarbeitung|verwendung) meiner daten",
      "(ich|wir) (mochte|mochten|will|wollen) (keine|nicht) (e mails|emails|werbung|post|nachrichten) (mehr|) (erhalten|bekommen|)",
    ],
  },
  {
    rule: "dnc",
    name: "remove-me",
    language: "fr",
    negatable: true,
    patterns: [
      "(merci de|veuillez|pouvez vous|pourriez vous|je vous prie de|prière de|priere de) (me|nous) (retirer|supprimer|desinscrire|desabonner|radier|enlever|effacer)",
      "(retirez|supprimez|desinscrivez|desabonnez|enlevez|effacez|rayez) (moi|nous)",
      "(retirez|supprimez|effacez|enlevez) (mon adresse|mon email|mon e mail|mon mail|mes coordonnees|mes donnees)",
      "(merci de|veuillez) (retirer|supprimer|effacer|enlever) (mon adresse|mon email|mon e mail|mon mail|mes coordonnees|mes donnees)",
      "(je souhaite|je veux|je voudrais|nous souhaitons|j aimerais) (etre|) (me|) (desinscrire|desabonner|desinscrit|desinscrite|desabonne|desabonnee|retire|retiree|supprime|supprimee|radie|radiee)",
      "(me|nous) (desinscrire|desabonner|retirer|supprimer) de (votre|vos|la|cette) (liste|listes|base|fichier|mailing|newsletter|liste de diffusion)",
      "desinscription (svp|s il vous plait|merci)",
    ],
  },
  {
    rule: "dnc",
    name: "stop-contacting",
    language: "fr",
    patterns: [
      "(ne|n) (me|m|nous) (contactez|ecrivez|sollicitez|envoyez) plus",
      "(merci de|veuillez) ne plus (me|m|nous) (contacter|ecrire|solliciter|envoyer)",
      "(je ne veux|je ne souhaite|nous ne souhaitons|je ne desire) plus (recevoir|etre contacte|etre contactee|etre sollicite|etre sollicitee)",
      "(cessez|arretez) de (me|m|nous) (contacter|ecrire|solliciter|envoyer|spammer)",
      "(plus de|aucun autre|aucun) (mail|mails|email|emails|e mail|e mails|message|messages) (svp|s il vous plait|merci)",
    ],
  },
  {
    rule: "dnc",
    name: "remove-me",
    language: "es",
    negatable: true,
    patterns: [
      "(darme|dame|denme|deme|darnos|dennos) de baja",
      "(quiero|quisiera|deseo|solicito|pido) (darme de baja|la baja|ser eliminado|ser eliminada|que me eliminen|que me quiten|que me borren|que me den de baja)",
      "(eliminen|borren|quiten|saquen|eliminame|borrame|quitame|sacame|eliminadme|borradme|quitadme) (me|mi correo|mi email|mi direccion|mis datos|de su lista|de la lista|de vuestra lista|de tu lista|de sus listas)",
      "(por favor|favor) (eliminen|borren|quiten|saquen) (me|mi correo|mi email|mi direccion|mis datos)",
      "(eliminarme|borrarme|quitarme|sacarme) de (su|la|vuestra|tu|sus) (lista|listas|base de datos|base|lista de correo|lista de distribucion)",
      "(cancelar|anular) (mi|la) (suscripcion|subscripcion)",
    ],
  },
  {
    rule: "dnc",
    name: "stop-contacting",
    language: "es",
    patterns: [
      "no (me|nos) (contacten|contactes|escriban|escribas|envien|envies|molesten|molestes) (mas|nunca mas|de nuevo|otra vez)",
      "no (quiero|deseo|queremos|deseamos) recibir (mas|ningun|ningunos|ningun otro|otros) (correos|correo|emails|email|mensajes|mails|comunicaciones)",
      "(dejen|deja|dejad) de (enviarme|escribirme|contactarme|enviarnos|escribirnos|contactarnos|molestarme|mandarme)",
      "no (mas|quiero mas) (correos|emails|mensajes|mails)",
    ],
  },
  {
    rule: "dnc",
    name: "remove-me",
    language: "it",
    negatable: true,
    patterns: [
      "(cancellatemi|cancellami|rimuovetemi|rimuovimi|toglietemi|toglimi|eliminatemi|eliminami)",
      "(vi prego di|si prega di|per favore|vi chiedo di|chiedo di|potete) (cancellarmi|rimuovermi|togliermi|eliminarmi|disiscrivermi)",
      "(cancellarmi|rimuovermi|togliermi|eliminarmi) (dalla|dalle|dai|dal) (vostra|vostre|vostri|vostro|sua|lista|liste|mailing list|database|newsletter|elenco)",
      "(cancellate|rimuovete|eliminate|togliete) (il mio indirizzo|la mia email|la mia mail|i miei dati|il mio contatto)",
      "(voglio|vorrei|desidero) (essere|) (cancellato|cancellata|rimosso|rimossa|disiscritto|disiscritta|disiscrivermi|cancellarmi)",
      "(disiscrivetemi|disiscrivimi)",
    ],
  },
  {
    rule: "dnc",
    name: "stop-contacting",
    language: "it",
    patterns: [
      "non (contattatemi|contattateci|scrivetemi|scriveteci|mandatemi|inviatemi) piu",
      "non (voglio|desidero|vogliamo|desideriamo) (piu|) ricevere (altre|ulteriori|piu|) (email|mail|e mail|comunicazioni|messaggi)",
      "(smettete|smettetela|smetti) di (scrivermi|contattarmi|inviarmi|mandarmi|scriverci|contattarci)",
      "(basta|stop) (email|mail|e mail|messaggi)",
    ],
  },
  {
    rule: "dnc",
    name: "remove-me",
    language: "nl",
    negatable: true,
    patterns: [
      "(verwijder|verwijdert|haal) (mij|me|ons|mijn gegevens|mijn adres|mijn e mailadres|mijn emailadres)",
      "(wilt u|kunt u|graag) (mij|me|ons|mijn gegevens|mijn e mailadres) (verwijderen|uitschrijven|afmelden|van de lijst halen)",
      "(ik wil|ik wens|ik zou graag|wij willen) (mij|me|ons|) (uitschrijven|afmelden|verwijderd worden|worden verwijderd|uitgeschreven worden)",
      "(uit|van) (uw|je|jullie|de) (mailinglijst|lijst|bestand|database|verzendlijst|nieuwsbrief) (verwijderen|halen|schrappen)",
      "(graag|gelieve|svp) (uitschrijven|afmelden|verwijderen)",
    ],
  },
  {
    rule: "dnc",
    name: "stop-contacting",
    language: "nl",
    patterns: [
      "(geen|niet meer) (mails|e mails|emails|berichten|mail|e mail) (meer|ontvangen|sturen|)",
      "(neem|neemt) (geen|niet meer) contact (meer|) (met mij|met ons|op)",
      "(stuur|stuurt|mail|mailt) (mij|me|ons) (geen|niet meer|nooit meer)",
      "(stop|stopt|hou|houd) (op|) (met mailen|met e mailen|met mij te mailen|met benaderen|met contact opnemen)",
      "(niet meer|nooit meer) (benaderen|contacteren|mailen|e mailen)",
    ],
  },
  {
    rule: "dnc",
    name: "remove-me",
    language: "pt",
    negatable: true,
    patterns: [
      "(remova|removam|retire|retirem|tire|tirem|exclua|excluam|apague|apaguem) (me|meu email|meu e mail|meu endereco|meus dados|meu contato|o meu email|o meu e mail|o meu endereco|os meus dados)",
      "(por favor|favor) (remova|removam|retire|retirem|tire|tirem|exclua|excluam) (me|meu|o meu|os meus)",
      "(remover|retirar|tirar|excluir) (me|o meu email|meu email|meu e mail|o meu e mail|meus dados|os meus dados|meu contato) (da|das|do|dos) (sua|vossa|lista|listas|base|mailing)",
      "(quero|gostaria de|desejo|solicito) (ser removido|ser removida|ser excluido|ser excluida|me descadastrar|descadastrar|cancelar a inscricao|cancelar minha inscricao|sair da lista)",
      "(me|nos) (descadastre|descadastrem|descadastrar)",
      "(descadastrar|descadastre|descadastrem) (meu|o meu|me|este)",
    ],
  },
  {
    rule: "dnc",
    name: "stop-contacting",
    language: "pt",
    patterns: [
      "nao (me|nos) (contate|contatem|contacte|contactem|envie|enviem|escreva|escrevam|mande|mandem) mais",
      "nao (quero|desejo|queremos|desejamos) (mais|) receber (mais|) (emails|e mails|email|mensagens|comunicacoes|correspondencia)",
      "(parem|pare|deixem|deixe) de (me|nos) (enviar|mandar|contatar|contactar|escrever)",
      "(parem|pare|deixem|deixe) de (enviar|mandar) (emails|e mails|mensagens)",
    ],
  },
  // ---------------------------------------------------------------- wrong person / left / mailbox no longer used
  {
    rule: "wrong_person",
    name: "left-company",
    language: "en",
    patterns: [
      "(i|i have|she|he|they|she has|he has|they have|has|have) (left|departed) (the|this|our|my) (company|firm|business|organisation|organization|agency|team|group|practice)",
      "(i am|she is|he is|they are|is|are|am) no longer (with|at|employed|working|part of|employed at|employed by|employed with|in this role|in that role|in the role|responsible|the right|the correct|in charge|the contact|your contact|the person|involved|associated)",
      "no longer (works|working|work|employed) (at|for|with|here|there|in)",
      "(does|do) not work (here|there) (anymore|any more|any longer|)",
      "(does|do) not work (at|for) * (anymore|any more|any longer)",
      "(is|are|am) not (with|at) (the company|this company|us) (anymore|any more|any longer)",
      "(i have|she has|he has|they have) (retired|changed roles|changed jobs|changed positions|moved to another company|moved to a new company)",
      "(i|she|he) retired (last|this|in|recently|earlier|from|a few)",
      "(my|her|his|their) last day (at|with|was)",
      "(is|am|are) (on|currently on) garden leave",
    ],
  },
  {
    rule: "wrong_person",
    name: "not-the-right-person",
    language: "en",
    patterns: [
      "(not|no longer) the (right|correct|best|appropriate|relevant|proper) (person|contact|point of contact|people|person to talk to|person to speak to|person to contact)",
      "(you have|you ve|you got|you reached|you have reached|you contacted|you emailed) the wrong (person|contact|email|address|guy|gal|company|team)",
      "wrong (person|contact|email address|address|recipient)",
      "(i am|i) (not|do not) (handle|deal with|look after|manage|run|own|oversee|cover) (this|that|these|marketing|sales|procurement|purchasing|it|hr)",
      "(i am|we are) not (responsible|in charge) for",
      "(not|no longer) (my|our) (area|department|responsibility|remit|role)",
    ],
  },
  {
    rule: "wrong_person",
    name: "left-company",
    language: "en",
    machineOnly: true,
    patterns: ["(has|have) (left|departed) * $", "(is|are) no longer (with|at) * $"],
  },
  {
    rule: "wrong_person",
    name: "referral",
    language: "en",
    humanOnly: true,
    patterns: [
      "(you should|you may want to|you might want to|better to|best to) (contact|reach out to|email|speak to|talk to|try) (my colleague|my boss|my manager|my replacement|my successor|our head of)",
      "(please|you can|you could|you may) (try|contact|reach out to|email) (my colleague|my replacement|my successor|our head of|my manager|my boss)",
    ],
  },
  {
    rule: "wrong_person",
    name: "mailbox-unused",
    language: "en",
    patterns: [
      "(this|the|my) (mailbox|email address|email account|address|inbox|email|e mail address|account) (is|will) no longer (be|) (monitored|active|in use|used|checked|read|valid|in service|being monitored|being checked|being read|maintained)",
      "(mailbox|email address|address|inbox|account) (is|has been) (closed|deactivated|disabled|discontinued|decommissioned|retired)",
      "no longer (monitored|in use|being monitored|checked|being checked|being read|active)",
    ],
  },
  {
    rule: "wrong_person",
    name: "left-company",
    language: "de",
    patterns: [
      "(nicht mehr|nicht langer) (im unternehmen|bei|in der firma|im haus|im hause|beschaftigt|tatig|angestellt|zustandig|mitarbeiter)",
      "(hat|habe|haben) (das unternehmen|die firma|unser unternehmen|unsere firma|uns|das haus) (verlassen|zum * verlassen)",
      "(ist|bin) aus dem unternehmen ausgeschieden",
      "(ausgeschieden|in den ruhestand gegangen|im ruhestand)",
      "(nicht der|nicht die|nicht mehr der|nicht mehr die) (richtige|richtigen|zustandige|zustandigen|passende|passenden) (ansprechpartner|ansprechpartnerin|ansprechperson|person|kontakt)",
      "(falsche|falschen) (ansprechpartner|ansprechpartnerin|person|empfanger|adresse)",
      "(bin|sind) (dafur|hierfur|) nicht zustandig",
      "(dieses postfach|diese e mail adresse|dieses e mail konto|diese adresse|dieses konto) (wird|ist) (nicht mehr|nicht langer) (gelesen|genutzt|aktiv|betreut|uberwacht|abgerufen|verwendet|bearbeitet)",
      "(postfach|e mail adresse|adresse) (wird|ist) nicht mehr (aktiv|gelesen|besetzt|betreut)",
    ],
  },
  {
    rule: "wrong_person",
    name: "left-company",
    language: "fr",
    patterns: [
      "(ne fait|ne fais|ne font) plus partie (de|du|des)",
      "(ne travaille|ne travaillent) plus (chez|pour|dans|au sein|a)",
      "(a|ai|ont|avons) quitte (la societe|l entreprise|la structure|le groupe|l agence|notre societe|nos effectifs|ses fonctions|mes fonctions|le cabinet)",
      "(n est|ne suis) plus (en poste|en charge|dans l entreprise|dans la societe|au sein|chez|salarie|salariee|le bon|la bonne)",
      "(pas|plus) (la bonne|le bon) (personne|interlocuteur|interlocutrice|contact)",
      "(je ne suis pas|ne suis pas) (en charge|responsable) de",
      "(cette adresse|cette boite|cette boite mail|cette adresse email|cette adresse e mail|cette messagerie) (n est plus|ne sera plus) (consultee|active|utilisee|lue|valide|surveillee)",
      "(a pris|ai pris) sa retraite",
    ],
  },
  {
    rule: "wrong_person",
    name: "left-company",
    language: "es",
    patterns: [
      "ya no (trabaja|trabajo|trabajamos|forma parte|formo parte|pertenece|pertenezco|es parte|soy parte|esta con nosotros)",
      "(dejo|he dejado|ha dejado|ha abandonado|abandono) (la empresa|la compania|la organizacion|nuestra empresa|la firma)",
      "no (soy|es) la persona (adecuada|indicada|correcta|responsable|encargada)",
      "no (soy|es) el (responsable|encargado|contacto adecuado|contacto correcto|interlocutor)",
      "(este correo|esta direccion|esta cuenta|este buzon|esta direccion de correo) (ya no|no) (esta|se) (activa|activo|monitoriza|revisa|utiliza|usa|lee)",
      "(se ha jubilado|me he jubilado|se jubilo)",
    ],
  },
  {
    rule: "wrong_person",
    name: "left-company",
    language: "it",
    patterns: [
      "non (lavora|lavoro|lavoriamo|fa|faccio) piu (per|presso|in|con|parte)",
      "non (e|sono) piu (in azienda|presso|con noi|dipendente|il referente|la referente|responsabile|in forza)",
      "(ha|ho|hanno) lasciato (l azienda|la societa|il gruppo|la nostra azienda|la nostra societa)",
      "non (sono|e) la persona (giusta|corretta|adatta|di riferimento|responsabile)",
      "non (sono|e) il (referente|responsabile|contatto giusto)",
      "(questo indirizzo|questa casella|questa email|questa mail|questo account) (non e piu|non sara piu) (attivo|attiva|monitorato|monitorata|letto|letta|utilizzato|utilizzata|in uso)",
      "(e andato|e andata|sono andato|sono andata) in pensione",
    ],
  },
  {
    rule: "wrong_person",
    name: "left-company",
    language: "nl",
    patterns: [
      "(werkt|werk|werken) niet (meer|langer) (bij|voor|in)",
      "(is|ben|zijn) niet (meer|langer) (werkzaam|in dienst|verbonden) (bij|voor|aan|)",
      "(heeft|hebben|heb) (het bedrijf|de organisatie|ons bedrijf|onze organisatie|de firma) verlaten",
      "(is|ben) uit dienst",
      "niet de (juiste|goede|aangewezen|verantwoordelijke) (persoon|contactpersoon|persoon voor)",
      "(dit e mailadres|dit emailadres|dit adres|deze mailbox|dit account) (is|wordt) niet (meer|langer) (in gebruik|actief|gelezen|bewaakt|gecontroleerd)",
      "(met pensioen|gepensioneerd)",
    ],
  },
  {
    rule: "wrong_person",
    name: "left-company",
    language: "pt",
    patterns: [
      "nao (trabalha|trabalho|trabalhamos|faz parte|faco parte) mais (na|no|da|do|com|para|em)",
      "ja nao (trabalha|trabalho|trabalhamos|faz parte|faco parte) (na|no|da|do|com|para|em)",
      "(deixou|deixei|saiu|sai) (da|a) (empresa|companhia|organizacao|firma)",
      "nao (sou|e) a pessoa (certa|correta|indicada|adequada|responsavel)",
      "nao (sou|e) o (responsavel|contato certo|contato correto|interlocutor)",
      "(este email|este e mail|este endereco|esta caixa|esta conta) (nao e mais|nao esta mais|ja nao e|ja nao esta|deixou de ser) (monitorado|monitorada|utilizado|utilizada|ativo|ativa|lido|lida)",
      "(se aposentou|me aposentei)",
    ],
  },
  // ---------------------------------------------------------------- out of office
  // Headers and the responder's subject are read by src/replies/auto-reply.ts (a person who mentions
  // a holiday is still replying); the body alone counts only with the words responders title their notice with.
  {
    rule: "ooo",
    name: "notice",
    language: "en",
    patterns: ["(out of office|out of the office) (auto reply|autoreply|automatic reply|auto response|autoresponse)"],
  },
  { rule: "ooo", name: "notice", language: "de", patterns: ["(abwesenheitsnotiz|abwesenheitsmeldung)"] },
  { rule: "ooo", name: "notice", language: "fr", patterns: ["(message|avis|notification) d absence"] },
  { rule: "ooo", name: "notice", language: "es", patterns: ["(mensaje|aviso|respuesta) de ausencia"] },
  { rule: "ooo", name: "notice", language: "it", patterns: ["(messaggio|avviso|notifica) di assenza"] },
  { rule: "ooo", name: "notice", language: "nl", patterns: ["(afwezigheidsbericht|afwezigheidsmelding)"] },
  { rule: "ooo", name: "notice", language: "pt", patterns: ["(mensagem|aviso) de ausencia"] },
  // ---------------------------------------------------------------- automated and catch-all notices
  {
    rule: "automated",
    name: "notice",
    language: "en",
    patterns: [
      "this is an (automated|automatic|auto generated|automatically generated|unattended) (message|response|reply|email|e mail|notification|mailbox|acknowledgement|acknowledgment)",
      "(automatically generated|auto generated|automated) (message|response|reply|email|notification|acknowledgement)",
      "(please|kindly) do not (reply|respond) to this (email|e mail|message|address)",
      "do not reply to this (email|e mail|message|address)",
      "(this|the) (mailbox|inbox|email address|address|account) is not (monitored|attended|checked|read)",
      "(this is an|this is a) (automated|automatic|auto generated|no reply|noreply) (message|response|reply|email|e mail|notification)",
      "(unmonitored|unattended|no reply|noreply) (mailbox|inbox|address|email address|account)",
      "(we have|we) received your (message|email|e mail|request|enquiry|inquiry|ticket|submission) and (will|shall|aim to) (respond|reply|get back|be in touch|answer)",
      "(your|this) (request|message|email|enquiry|inquiry|ticket|case) (has been|was) (received|logged|created|opened|assigned|submitted)",
      "(ticket|case) (number|no|id|nr)",
      "(thank you|thanks) for (contacting|reaching out to|writing to|emailing|your message to) (us|our|the) (support|customer|help|sales|service|team|desk)",
      "(catch all|catchall) (mailbox|address|inbox)",
      "(messages|emails) (sent|addressed) to this address (are|will) (not|no longer)",
    ],
  },
  {
    rule: "automated",
    name: "notice",
    language: "de",
    patterns: [
      "(automatisch generierte|automatisch erstellte) (nachricht|e mail|antwort|benachrichtigung|eingangsbestatigung)",
      "(dies ist eine|diese nachricht ist eine) (automatische|automatisch generierte) (nachricht|e mail|antwort|benachrichtigung|eingangsbestatigung)",
      "(bitte|) (antworten sie nicht|nicht antworten) auf diese (e mail|nachricht)",
      "(ihre|ihr) (anfrage|nachricht|e mail|ticket) (ist|wurde) (bei uns|) (eingegangen|erhalten|angelegt|erstellt)",
      "(wir haben|haben wir) ihre (anfrage|nachricht|e mail) erhalten",
      "(ticketnummer|ticket nummer|vorgangsnummer|fallnummer|aktenzeichen)",
      "(dieses postfach|diese adresse) wird nicht (uberwacht|gelesen)",
    ],
  },
  {
    rule: "automated",
    name: "notice",
    language: "fr",
    patterns: [
      "(message|courriel|email|e mail|reponse) (genere|generee) automatiquement",
      "(merci de ne pas|veuillez ne pas|ne pas) repondre a (ce|cet) (message|email|e mail|courriel)",
      "nous avons (bien|) recu votre (message|demande|email|e mail|courriel)",
      "votre (demande|message|ticket) a (bien|) ete (recu|recue|enregistre|enregistree|cree|creee)",
      "(numero de ticket|numero de dossier|numero de demande|reference de votre demande)",
      "(cette adresse|cette boite) n est pas (surveillee|consultee)",
    ],
  },
  {
    rule: "automated",
    name: "notice",
    language: "es",
    patterns: [
      "(mensaje|correo|respuesta) (generado|generada) automaticamente",
      "(por favor|) no (responda|responder|conteste) a este (correo|mensaje|email)",
      "hemos recibido (su|tu) (mensaje|correo|solicitud|consulta|email)",
      "(su|tu) (solicitud|mensaje|consulta|ticket) (ha sido|fue) (recibido|recibida|registrado|registrada|creado|creada)",
      "(numero de ticket|numero de caso|numero de solicitud|numero de referencia)",
    ],
  },
  {
    rule: "automated",
    name: "notice",
    language: "it",
    patterns: [
      "(messaggio|email|mail|risposta) (generato|generata) automaticamente",
      "(si prega di non|per favore non|non) rispondere a (questo|questa) (messaggio|email|mail|e mail)",
      "abbiamo ricevuto (la sua|la tua|il suo|il tuo|la vostra|il vostro) (richiesta|messaggio|email|mail)",
      "(la sua|la tua|la vostra) (richiesta|segnalazione) e stata (ricevuta|registrata|presa in carico)",
      "(numero di ticket|numero ticket|numero di pratica|numero della richiesta)",
    ],
  },
  {
    rule: "automated",
    name: "notice",
    language: "nl",
    patterns: [
      "(automatisch gegenereerd|automatisch gegenereerde|automatisch verzonden) (bericht|e mail|email|antwoord|)",
      "(gelieve|u kunt|graag) niet (te antwoorden|antwoorden|reageren) op (dit|deze) (bericht|e mail|mail)",
      "(wij hebben|we hebben) uw (bericht|e mail|mail|aanvraag|vraag) (in goede orde|) ontvangen",
      "uw (aanvraag|bericht|vraag|ticket) is (ontvangen|geregistreerd|aangemaakt)",
      "(ticketnummer|ticket nummer|referentienummer|dossiernummer)",
    ],
  },
  {
    rule: "automated",
    name: "notice",
    language: "pt",
    patterns: [
      "(mensagem|email|e mail|resposta) (gerado|gerada) automaticamente",
      "(por favor|favor|) nao (responda|responder) (a|) (este|esta) (email|e mail|mensagem)",
      "(recebemos|recebemos a|recebemos o) (sua|seu|a sua|o seu) (mensagem|email|e mail|pedido|solicitacao)",
      "(sua|seu|a sua|o seu) (solicitacao|pedido|chamado|ticket) (foi|) (recebido|recebida|registrado|registrada|aberto|aberta)",
      "(numero do chamado|numero do ticket|numero de protocolo|protocolo de atendimento)",
    ],
  },
];

/** A whole first line that is only an opt-out word (after greetings and courtesies): "Unsubscribe", "STOP", "Remove me". */
export const BARE_OPT_OUTS = [
  "unsubscribe",
  "unsubscribe me",
  "unsub",
  "stop",
  "stop it",
  "stop emailing",
  "stop emailing me",
  "remove",
  "remove me",
  "opt out",
  "take me off",
  "take me off your list",
  "do not contact",
  "do not email",
  "no more emails",
  "abmelden",
  "austragen",
  "abbestellen",
  "entfernen",
  "desabonner",
  "desinscrire",
  "desinscription",
  "desabonnement",
  "baja",
  "dar de baja",
  "darme de baja",
  "cancelar suscripcion",
  "cancellami",
  "cancellatemi",
  "disiscrivimi",
  "rimuovimi",
  "uitschrijven",
  "afmelden",
  "verwijderen",
  "descadastrar",
  "remover",
];

/** Words dropped before a first line is compared with the bare opt-outs. */
export const COURTESIES = new Set([
  "please", "pls", "plz", "kindly", "thanks", "thank", "you", "thx", "ty", "bitte", "danke", "merci", "svp", "s", "il", "vous", "plait",
  "gracias", "por", "favor", "grazie", "per", "bedankt", "graag", "alstublieft", "aub", "obrigado", "obrigada", "now", "asap",
]);

/** Greeting words: a first line made of one of these (and a name) is skipped. */
export const GREETINGS = new Set([
  "hi", "hello", "hey", "dear", "hallo", "guten", "tag", "moin", "servus", "bonjour", "salut", "hola", "buenos", "dias", "buongiorno",
  "ciao", "salve", "gentile", "hoi", "goedemorgen", "goedemiddag", "beste", "ola", "bom", "dia", "prezado", "prezada", "caro", "cara",
]);

/** Words that, opening the clause before a negatable pattern, cancel it ("please do NOT remove me"). */
export const NEGATORS = new Set(["not", "never", "no", "nicht", "nie", "kein", "keine", "ne", "pas", "jamais", "nunca", "non", "mai", "niet", "nooit", "geen", "nao"]);
