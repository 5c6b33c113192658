export * from "./accounts";
export * from "./campaigns";
