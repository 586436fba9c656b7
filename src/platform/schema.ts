// Table types for Kysely. One interface per table in migrations/, snake_case as in SQL.
import type { ColumnType, Generated } from 'kysely';

/** A timestamp with a database default: optional on insert. */
type DefaultedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type Json = ColumnType<Record<string, unknown>, string | undefined, string>;

export interface UsersTable {
  id: Generated<number>;
  username: string;
  email: Generated<string>;
  first_name: Generated<string>;
  last_name: Generated<string>;
  password_hash: Generated<string>;
  is_active: Generated<boolean>;
  is_org: Generated<boolean>;
  city: Generated<string>;
  country: Generated<string>;
  organization: Generated<string>;
  home_page: Generated<string>;
  twitter: Generated<string>;
  require_auth: Generated<boolean>;
  metadata: Json;
  created_by: number | null;
  date_joined: DefaultedTimestamp;
  last_login: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface PasswordHistoryTable {
  id: Generated<number>;
  user_id: number;
  password_hash: string;
  created_at: DefaultedTimestamp;
}

export interface TokenTable {
  user_id: number;
  key_hash: Uint8Array;
  key_sealed: string;
  created_at: DefaultedTimestamp;
}

export interface LoginFailuresTable {
  key: string;
  failures: number;
  first_failed_at: DefaultedTimestamp;
  locked_until: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface SchemaMigrationsTable {
  version: string;
  applied_at: DefaultedTimestamp;
}

export interface Schema {
  users: UsersTable;
  password_history: PasswordHistoryTable;
  api_tokens: TokenTable;
  temp_tokens: TokenTable;
  login_failures: LoginFailuresTable;
  schema_migrations: SchemaMigrationsTable;
}
