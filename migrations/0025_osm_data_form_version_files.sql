-- OpenStreetMap answers (onadata's OsmData): what was read from the `.osm` file an osm question of
-- a record names, one row per record and question (the file's first way, or its first node when it
-- has no way, as onadata keeps it). `tags` holds the feature's tags without empty or FIXME values,
-- plus `<type>:id` and the centroid as `ctr:lat` / `ctr:lon`; `geom` its geometry as GeoJSON
-- (a GeometryCollection of one Polygon, LineString or Point, longitude first). The record's JSON
-- carries the same facts as `<field>:<type>:id` and `<field>:<tag>` keys (written with the row).
CREATE TABLE osm_data (
  id           serial PRIMARY KEY,
  instance_id  integer NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
  field_name   text NOT NULL,
  filename     text NOT NULL,
  osm_id       text NOT NULL,
  osm_type     text NOT NULL,
  tags         jsonb NOT NULL,
  geom         jsonb,
  date_created timestamptz NOT NULL DEFAULT now(),
  date_modified timestamptz NOT NULL DEFAULT now(),
  UNIQUE (instance_id, field_name)
);

-- Each published version keeps the XLSForm it was converted from, as onadata's XFormVersion does,
-- so an older version's XLSForm can still be downloaded after the form is replaced. Versions
-- published before this migration get the form's file when they are its current version.
ALTER TABLE form_versions ADD COLUMN xls_blob text;
ALTER TABLE form_versions ADD COLUMN xls_filename text;
UPDATE form_versions v SET xls_blob = f.xls_blob, xls_filename = f.xls_filename
FROM forms f WHERE f.id = v.form_id AND f.version = v.version AND f.xls_blob IS NOT NULL;
