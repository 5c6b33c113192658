export * from "./accounts";
export * from "./campaigns";
export * from "./inbox";
export * from "./webhooks";
export * from "./deliverability";
export * from "./sequences";
export * from "./mailboxes";
export * from "./engine";
