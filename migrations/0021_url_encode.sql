-- Percent-encoding for links built in SQL (an attachment's download_url carries its file name).
--
-- The same as JavaScript's encodeURIComponent: letters, digits and - _ . ! ~ * ' ( ) stay, every
-- other UTF-8 byte becomes %XX. Names made only of those characters (most: camera file names)
-- are returned at once, without splitting them into bytes.
CREATE FUNCTION gather_url_encode(value text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
  SELECT CASE WHEN value ~ '^[A-Za-z0-9_.~!*''()-]*$' THEN value ELSE (
    SELECT string_agg(
      CASE WHEN b BETWEEN 48 AND 57 OR b BETWEEN 65 AND 90 OR b BETWEEN 97 AND 122 OR b IN (33, 39, 40, 41, 42, 45, 46, 95, 126)
        THEN chr(b) ELSE '%' || upper(lpad(to_hex(b), 2, '0')) END, '' ORDER BY n)
    FROM (SELECT convert_to(value, 'UTF8') AS bytes) AS v,
      LATERAL generate_series(0, length(v.bytes) - 1) AS n,
      LATERAL get_byte(v.bytes, n) AS b
  ) END
$$;
