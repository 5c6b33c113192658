import { afterAll } from "vitest";
import { closeConsole, openConsole } from "./background-logs";
import { migrateEveryDatabase } from "./storage";

openConsole();
afterAll(closeConsole);
await migrateEveryDatabase();
