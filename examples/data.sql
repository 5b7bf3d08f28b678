-- A little data. The demo does not send it through the proxy: it plans each statement as geoproxy
-- would (the same analysis, placement and keys.tsv) and loads each region's share over a plain
-- connection to that region's server, so each row lands in the region its key lives in. The
-- replicated tables are written in every region, fx_rates too: the demo's servers do not replicate.

INSERT INTO currencies (code, name, digits) VALUES
  ('EUR', 'Euro', 2), ('USD', 'US dollar', 2), ('INR', 'Indian rupee', 2), ('JPY', 'Yen', 0);

INSERT INTO fx_rates (base, quote, rate) VALUES
  ('EUR', 'USD', 1.08), ('USD', 'INR', 83.2), ('EUR', 'INR', 89.9), ('USD', 'JPY', 151.4);

INSERT INTO users (tenant_id, id, name, country, age) VALUES
  ('alice', 1, 'Alice', 'FR', 34),
  ('bob', 1, 'Bob', 'US', 41),
  ('chandra', 1, 'Chandra', 'IN', 29),
  ('dmitri', 1, 'Dmitri', 'DE', 52),
  ('elena', 1, 'Elena', 'ES', 23),
  ('farah', 1, 'Farah', 'IN', 37),
  ('george', 1, 'George', 'US', 45),
  ('hiro', 1, 'Hiro', 'JP', 31);

INSERT INTO orders (tenant_id, id, user_id, buyer, currency, total) VALUES
  ('alice', 1, 1, 1, 'EUR', 19.90),
  ('alice', 2, 1, 1, 'EUR', 5.00),
  ('bob', 1, 1, 1, 'USD', 120.00),
  ('chandra', 1, 1, 1, 'INR', 999.00),
  ('george', 1, 1, 1, 'USD', 42.42),
  ('hiro', 1, 1, 1, 'JPY', 3000);

INSERT INTO eu_audit (tenant_id, action) VALUES ('alice', 'login'), ('dmitri', 'export');
