#!/bin/sh
# Runs once, when the postgres container initializes its data directory: sample tables, the publication, and
# the least-privilege role pgcdc connects as (docs/security.md explains each grant).
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
     -v cdc_password="${CDC_PASSWORD:-cdc}" -v dbname="$POSTGRES_DB" <<'SQL'
CREATE TABLE customers (id serial PRIMARY KEY, name text NOT NULL, email text UNIQUE);
CREATE TABLE orders (id serial PRIMARY KEY, customer_id int NOT NULL REFERENCES customers,
                     amount numeric(10, 2) NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
INSERT INTO customers (name, email) VALUES ('Sally Thomas', 'sally@example.com'), ('George Bailey', 'gb@example.com');
INSERT INTO orders (customer_id, amount) VALUES (1, 19.99), (2, 5.00);

-- FOR ALL TABLES needs a superuser: created here, so the connector's role needs no ownership at all.
CREATE PUBLICATION dbz_publication FOR ALL TABLES;

CREATE ROLE cdc LOGIN REPLICATION PASSWORD :'cdc_password';
GRANT CONNECT ON DATABASE :"dbname" TO cdc;
GRANT USAGE ON SCHEMA public TO cdc;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO cdc;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO cdc;
SQL
