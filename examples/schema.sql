-- The example schema, created the same in every region. Which rows each region holds is decided
-- by the placement in geoproxy.toml: users and orders by tenant_id, currencies and fx_rates
-- everywhere, eu_audit in eu-west only.

CREATE TABLE users (
  tenant_id  text        NOT NULL,
  id         bigint      NOT NULL,
  name       text        NOT NULL,
  country    text,
  age        integer,
  last_seen  timestamptz,
  active     boolean     NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id)
);

CREATE TABLE orders (
  tenant_id  text          NOT NULL,
  id         bigint        NOT NULL,
  user_id    bigint        NOT NULL,
  buyer      bigint,
  currency   char(3)       NOT NULL,
  total      numeric(12,2) NOT NULL,
  status     text          NOT NULL DEFAULT 'open',
  created_at timestamptz   NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id)
);

CREATE TABLE currencies (
  code   char(3) PRIMARY KEY,
  name   text    NOT NULL,
  digits integer NOT NULL DEFAULT 2
);

CREATE TABLE fx_rates (
  base       char(3)       NOT NULL,
  quote      char(3)       NOT NULL,
  rate       numeric(18,8) NOT NULL,
  updated_at timestamptz   NOT NULL DEFAULT now(),
  PRIMARY KEY (base, quote)
);

CREATE TABLE eu_audit (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant_id  text        NOT NULL,
  action     text        NOT NULL,
  at         timestamptz NOT NULL DEFAULT now()
);
