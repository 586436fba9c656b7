// The web form page's own words (not the form's, which it translates itself, nor ODK Web Forms'
// buttons, which 0.22 has in English only), in the first of the browser's languages that Gather
// speaks here, else English.

export type PageLanguage = 'en' | 'fr' | 'es' | 'pt';

export interface Messages {
  readonly webForm: string;
  readonly draftTitle: string;
  signedInAs(name: string): string;
  readonly previewNote: string;
  readonly previewDone: string;
  readonly opening: string;
  readonly sending: string;
  waiting(count: number): string;
  readonly tryNow: string;
  sentFromDevice(count: number): string;
  refused(savedAt: string, reason: string): string;
  readonly discard: string;
  readonly signIn: string;
  readonly noFormHere: string;
  readonly cannotOpen: string;
  draftOffer(savedAt: string): string;
  readonly resumeDraft: string;
  readonly startNew: string;
  draftSaved(at: string): string;
  readonly keptOnDevice: string;
  readonly keptOnDeviceDone: string;
  notStored(reason: string): string;
  readonly editSaved: string;
  readonly thanks: string;
  readonly alreadyReceived: string;
  readonly sent: string;
  readonly unreachable: string;
  readonly unreachableNotSent: string;
  readonly signInToFill: string;
  readonly noSuchForm: string;
  readonly noRole: string;
  readonly signInToEdit: string;
  readonly noSuchRecord: string;
  serverAnswered(status: number): string;
  /** The date picker's words (its month and day names come from Intl). */
  readonly widgets: {
    readonly today: string;
    readonly clear: string;
    readonly chooseYear: string;
    readonly chooseMonth: string;
    readonly chooseDate: string;
    readonly prevMonth: string;
    readonly nextMonth: string;
    readonly prevYear: string;
    readonly nextYear: string;
    readonly prevDecade: string;
    readonly nextDecade: string;
    readonly noOptions: string;
    readonly noResults: string;
    readonly close: string;
  };
}

const en: Messages = {
  webForm: 'Web form',
  draftTitle: 'Draft',
  signedInAs: (name) => `Signed in as ${name}`,
  previewNote: 'Preview: answers entered here are never stored.',
  previewDone: 'This is a preview: the record is complete, and nothing was stored.',
  opening: 'Opening the form…',
  sending: 'Sending the record…',
  waiting: (count) => `${count} record${count === 1 ? '' : 's'} waiting on this device to be sent.`,
  tryNow: 'Try now',
  sentFromDevice: (count) => `${count} record${count === 1 ? '' : 's'} kept on this device ${count === 1 ? 'was' : 'were'} sent.`,
  refused: (savedAt, reason) => `A record kept on this device (${savedAt}) was refused: ${reason}`,
  discard: 'Discard it',
  signIn: 'Sign in',
  noFormHere: 'There is no form at this address.',
  cannotOpen: 'This form could not be opened here.',
  draftOffer: (savedAt) => `A draft of this record was saved on this device on ${savedAt}.`,
  resumeDraft: 'Resume draft',
  startNew: 'Start new',
  draftSaved: (at) => `Draft saved on this device at ${at}.`,
  keptOnDevice: 'The record is saved on this device and will be sent when the connection returns.',
  keptOnDeviceDone: 'Your record is saved on this device and will be sent when the connection returns.',
  notStored: (reason) => `The record was not stored: ${reason}`,
  editSaved: 'Your changes to the record were saved.',
  thanks: 'Thank you: your record was received.',
  alreadyReceived: 'This record had already been received.',
  sent: 'Record sent. The form is ready for the next one.',
  unreachable: 'The server cannot be reached. Check the connection and try again.',
  unreachableNotSent: 'The server cannot be reached. The record was not sent.',
  signInToFill: 'This form’s account asks who is filling it in: sign in to continue.',
  noSuchForm: 'There is no such form.',
  noRole: 'This form is not open for data entry here: it may be inactive, or your account may not have a role that submits to it.',
  signInToEdit: 'Sign in to edit this record.',
  noSuchRecord: 'There is no such record.',
  serverAnswered: (status) => `The server answered ${status}.`,
  widgets: {
    today: 'Today',
    clear: 'Clear',
    chooseYear: 'Choose year',
    chooseMonth: 'Choose month',
    chooseDate: 'Choose date',
    prevMonth: 'Previous month',
    nextMonth: 'Next month',
    prevYear: 'Previous year',
    nextYear: 'Next year',
    prevDecade: 'Previous decade',
    nextDecade: 'Next decade',
    noOptions: 'No options',
    noResults: 'No results found',
    close: 'Close',
  },
};

const fr: Messages = {
  webForm: 'Formulaire web',
  draftTitle: 'Brouillon',
  signedInAs: (name) => `Connecté en tant que ${name}`,
  previewNote: 'Aperçu : les réponses saisies ici ne sont jamais enregistrées.',
  previewDone: 'Ceci est un aperçu : la fiche est complète, et rien n’a été enregistré.',
  opening: 'Ouverture du formulaire…',
  sending: 'Envoi de la fiche…',
  waiting: (count) => `${count} fiche${count === 1 ? '' : 's'} en attente d’envoi sur cet appareil.`,
  tryNow: 'Réessayer',
  sentFromDevice: (count) => (count === 1 ? '1 fiche gardée sur cet appareil a été envoyée.' : `${count} fiches gardées sur cet appareil ont été envoyées.`),
  refused: (savedAt, reason) => `Une fiche gardée sur cet appareil (${savedAt}) a été refusée : ${reason}`,
  discard: 'L’abandonner',
  signIn: 'Se connecter',
  noFormHere: 'Il n’y a pas de formulaire à cette adresse.',
  cannotOpen: 'Ce formulaire ne peut pas être ouvert ici.',
  draftOffer: (savedAt) => `Un brouillon de cette fiche a été enregistré sur cet appareil le ${savedAt}.`,
  resumeDraft: 'Reprendre le brouillon',
  startNew: 'Recommencer',
  draftSaved: (at) => `Brouillon enregistré sur cet appareil à ${at}.`,
  keptOnDevice: 'La fiche est gardée sur cet appareil et sera envoyée au retour de la connexion.',
  keptOnDeviceDone: 'Votre fiche est gardée sur cet appareil et sera envoyée au retour de la connexion.',
  notStored: (reason) => `La fiche n’a pas été enregistrée : ${reason}`,
  editSaved: 'Vos modifications de la fiche ont été enregistrées.',
  thanks: 'Merci : votre fiche a bien été reçue.',
  alreadyReceived: 'Cette fiche avait déjà été reçue.',
  sent: 'Fiche envoyée. Le formulaire est prêt pour la suivante.',
  unreachable: 'Le serveur est injoignable. Vérifiez la connexion et réessayez.',
  unreachableNotSent: 'Le serveur est injoignable. La fiche n’a pas été envoyée.',
  signInToFill: 'Le compte de ce formulaire demande qui le remplit : connectez-vous pour continuer.',
  noSuchForm: 'Ce formulaire n’existe pas.',
  noRole: 'Ce formulaire n’est pas ouvert à la saisie ici : il est peut-être inactif, ou votre compte n’a pas de rôle qui permet d’y envoyer des fiches.',
  signInToEdit: 'Connectez-vous pour modifier cette fiche.',
  noSuchRecord: 'Cette fiche n’existe pas.',
  serverAnswered: (status) => `Le serveur a répondu ${status}.`,
  widgets: {
    today: 'Aujourd’hui',
    clear: 'Effacer',
    chooseYear: 'Choisir l’année',
    chooseMonth: 'Choisir le mois',
    chooseDate: 'Choisir la date',
    prevMonth: 'Mois précédent',
    nextMonth: 'Mois suivant',
    prevYear: 'Année précédente',
    nextYear: 'Année suivante',
    prevDecade: 'Décennie précédente',
    nextDecade: 'Décennie suivante',
    noOptions: 'Aucun choix',
    noResults: 'Aucun résultat',
    close: 'Fermer',
  },
};

const es: Messages = {
  webForm: 'Formulario web',
  draftTitle: 'Borrador',
  signedInAs: (name) => `Sesión iniciada como ${name}`,
  previewNote: 'Vista previa: las respuestas escritas aquí nunca se guardan.',
  previewDone: 'Esto es una vista previa: el registro está completo y no se guardó nada.',
  opening: 'Abriendo el formulario…',
  sending: 'Enviando el registro…',
  waiting: (count) => (count === 1 ? '1 registro espera en este dispositivo para ser enviado.' : `${count} registros esperan en este dispositivo para ser enviados.`),
  tryNow: 'Intentar ahora',
  sentFromDevice: (count) => (count === 1 ? 'Se envió 1 registro guardado en este dispositivo.' : `Se enviaron ${count} registros guardados en este dispositivo.`),
  refused: (savedAt, reason) => `Un registro guardado en este dispositivo (${savedAt}) fue rechazado: ${reason}`,
  discard: 'Descartarlo',
  signIn: 'Iniciar sesión',
  noFormHere: 'No hay ningún formulario en esta dirección.',
  cannotOpen: 'Este formulario no se puede abrir aquí.',
  draftOffer: (savedAt) => `Hay un borrador de este registro guardado en este dispositivo el ${savedAt}.`,
  resumeDraft: 'Retomar el borrador',
  startNew: 'Empezar de nuevo',
  draftSaved: (at) => `Borrador guardado en este dispositivo a las ${at}.`,
  keptOnDevice: 'El registro se guardó en este dispositivo y se enviará cuando vuelva la conexión.',
  keptOnDeviceDone: 'Su registro se guardó en este dispositivo y se enviará cuando vuelva la conexión.',
  notStored: (reason) => `El registro no se guardó: ${reason}`,
  editSaved: 'Se guardaron sus cambios en el registro.',
  thanks: 'Gracias: su registro fue recibido.',
  alreadyReceived: 'Este registro ya se había recibido.',
  sent: 'Registro enviado. El formulario está listo para el siguiente.',
  unreachable: 'No se puede contactar con el servidor. Compruebe la conexión y vuelva a intentarlo.',
  unreachableNotSent: 'No se puede contactar con el servidor. El registro no se envió.',
  signInToFill: 'La cuenta de este formulario pide saber quién lo rellena: inicie sesión para continuar.',
  noSuchForm: 'Ese formulario no existe.',
  noRole: 'Este formulario no está abierto a la captura aquí: puede estar inactivo, o su cuenta no tiene un rol que permita enviarle registros.',
  signInToEdit: 'Inicie sesión para editar este registro.',
  noSuchRecord: 'Ese registro no existe.',
  serverAnswered: (status) => `El servidor respondió ${status}.`,
  widgets: {
    today: 'Hoy',
    clear: 'Borrar',
    chooseYear: 'Elegir año',
    chooseMonth: 'Elegir mes',
    chooseDate: 'Elegir fecha',
    prevMonth: 'Mes anterior',
    nextMonth: 'Mes siguiente',
    prevYear: 'Año anterior',
    nextYear: 'Año siguiente',
    prevDecade: 'Década anterior',
    nextDecade: 'Década siguiente',
    noOptions: 'Sin opciones',
    noResults: 'No se encontraron resultados',
    close: 'Cerrar',
  },
};

const pt: Messages = {
  webForm: 'Formulário web',
  draftTitle: 'Rascunho',
  signedInAs: (name) => `Sessão iniciada como ${name}`,
  previewNote: 'Pré-visualização: as respostas dadas aqui nunca são guardadas.',
  previewDone: 'Isto é uma pré-visualização: o registo está completo e nada foi guardado.',
  opening: 'A abrir o formulário…',
  sending: 'A enviar o registo…',
  waiting: (count) => (count === 1 ? '1 registo aguarda envio neste dispositivo.' : `${count} registos aguardam envio neste dispositivo.`),
  tryNow: 'Tentar agora',
  sentFromDevice: (count) => (count === 1 ? 'Foi enviado 1 registo guardado neste dispositivo.' : `Foram enviados ${count} registos guardados neste dispositivo.`),
  refused: (savedAt, reason) => `Um registo guardado neste dispositivo (${savedAt}) foi recusado: ${reason}`,
  discard: 'Descartá-lo',
  signIn: 'Iniciar sessão',
  noFormHere: 'Não há nenhum formulário neste endereço.',
  cannotOpen: 'Este formulário não pode ser aberto aqui.',
  draftOffer: (savedAt) => `Um rascunho deste registo foi guardado neste dispositivo em ${savedAt}.`,
  resumeDraft: 'Retomar o rascunho',
  startNew: 'Começar de novo',
  draftSaved: (at) => `Rascunho guardado neste dispositivo às ${at}.`,
  keptOnDevice: 'O registo foi guardado neste dispositivo e será enviado quando a ligação voltar.',
  keptOnDeviceDone: 'O seu registo foi guardado neste dispositivo e será enviado quando a ligação voltar.',
  notStored: (reason) => `O registo não foi guardado: ${reason}`,
  editSaved: 'As suas alterações ao registo foram guardadas.',
  thanks: 'Obrigado: o seu registo foi recebido.',
  alreadyReceived: 'Este registo já tinha sido recebido.',
  sent: 'Registo enviado. O formulário está pronto para o próximo.',
  unreachable: 'Não é possível contactar o servidor. Verifique a ligação e tente de novo.',
  unreachableNotSent: 'Não é possível contactar o servidor. O registo não foi enviado.',
  signInToFill: 'A conta deste formulário pede para saber quem o preenche: inicie sessão para continuar.',
  noSuchForm: 'Esse formulário não existe.',
  noRole: 'Este formulário não está aberto à recolha aqui: pode estar inativo, ou a sua conta não tem um papel que permita enviar-lhe registos.',
  signInToEdit: 'Inicie sessão para editar este registo.',
  noSuchRecord: 'Esse registo não existe.',
  serverAnswered: (status) => `O servidor respondeu ${status}.`,
  widgets: {
    today: 'Hoje',
    clear: 'Limpar',
    chooseYear: 'Escolher ano',
    chooseMonth: 'Escolher mês',
    chooseDate: 'Escolher data',
    prevMonth: 'Mês anterior',
    nextMonth: 'Mês seguinte',
    prevYear: 'Ano anterior',
    nextYear: 'Ano seguinte',
    prevDecade: 'Década anterior',
    nextDecade: 'Década seguinte',
    noOptions: 'Sem opções',
    noResults: 'Nenhum resultado',
    close: 'Fechar',
  },
};

const CATALOGUE: Readonly<Record<PageLanguage, Messages>> = { en, fr, es, pt };

function isPageLanguage(value: string): value is PageLanguage {
  return Object.hasOwn(CATALOGUE, value);
}

/** The first of `languages` (BCP 47 tags, the browser's order) that the page speaks, else English. */
export function pageLanguage(languages: readonly string[]): PageLanguage {
  for (const tag of languages) {
    const primary = tag.split('-')[0]?.toLowerCase() ?? '';
    if (isPageLanguage(primary)) return primary;
  }
  return 'en';
}

/** The browser's languages, most wanted first. */
export function browserLanguages(): readonly string[] {
  return navigator.languages.length > 0 ? navigator.languages : [navigator.language];
}

export const language: PageLanguage = pageLanguage(browserLanguages());
export const messages: Messages = CATALOGUE[language];
/** Dates and times in the page's words: the browser's own tag for that language (fr-CA, pt-BR…). */
export const dateLocale: string = browserLanguages().find((tag) => pageLanguage([tag]) === language && tag.toLowerCase().startsWith(language)) ?? language;
