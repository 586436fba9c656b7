import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { osmRecordKeys, parseOsmAnswer } from './parse.ts';

const fixture = (name: string): string => readFileSync(new URL(`../../../test/fixtures/osm/${name}`, import.meta.url), 'utf8');

test('an OpenMapKit road (an open way) gives its tags, id and the line’s centroid as onadata’s osm.csv', () => {
  const road = parseOsmAnswer(fixture('OSMWay234134797.osm'));
  assert.equal(road?.osmType, 'way');
  assert.equal(road?.osmId, '234134797');
  assert.equal(road?.geometry?.type, 'LineString');
  // FIXME and empty values are left out.
  assert.deepEqual(Object.keys(road?.tags ?? {}).sort(), ['ctr:lat', 'ctr:lon', 'highway', 'lanes', 'name', 'way:id']);
  assert.equal(road?.tags['name'], 'Patuatuli Road');
  assert.ok(Math.abs(Number(road?.tags['ctr:lat']) - 23.708174238006087) < 1e-12);
  assert.ok(Math.abs(Number(road?.tags['ctr:lon']) - 90.40946505581161) < 1e-12);
});

test('a building (a closed way) is a polygon whose area centroid is onadata’s', () => {
  const building = parseOsmAnswer(fixture('OSMWay34298972.osm'));
  assert.equal(building?.geometry?.type, 'Polygon');
  assert.equal(building?.tags['building:levels'], '4');
  assert.ok(Math.abs(Number(building?.tags['ctr:lat']) - 23.707316084046038) < 1e-12);
  assert.ok(Math.abs(Number(building?.tags['ctr:lon']) - 90.40849938337506) < 1e-12);
  assert.deepEqual(osmRecordKeys('osm_building', 'way', '34298972', { name: 'kol' }), { 'osm_building:way:id': '34298972', 'osm_building:name': 'kol' });
});

test('a file without ways gives its first node', () => {
  const node = parseOsmAnswer('<osm><node id="7" lat="1.5" lon="2.5"><tag k="amenity" v="school"/></node><node id="8" lat="0" lon="0"/></osm>');
  assert.deepEqual(node, { osmId: '7', osmType: 'node', tags: { 'node:id': '7', amenity: 'school', 'ctr:lon': 2.5, 'ctr:lat': 1.5 }, geometry: { type: 'Point', coordinates: [2.5, 1.5] } });
});

test('DOCTYPEs, entities, malformed files and other roots give nothing', () => {
  const bomb = '<?xml version="1.0"?><!DOCTYPE osm [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><osm><way id="1"><tag k="x" v="&b;"/></way></osm>';
  assert.equal(parseOsmAnswer(bomb), undefined);
  assert.equal(parseOsmAnswer('<osm><way id="1"><tag k="x" v="&external;"/></way></osm>'), undefined);
  assert.equal(parseOsmAnswer('<osm><way id="1"><nd ref="2"/>'), undefined);
  assert.equal(parseOsmAnswer('<gpx><way id="1"/></gpx>'), undefined);
  assert.equal(parseOsmAnswer('not xml at all'), undefined);
  assert.equal(parseOsmAnswer('<osm/>'), undefined);
});

test('a duplicated action="modify" is read as onadata reads it', () => {
  const way = parseOsmAnswer('<osm><way id="5" action="modify" action="modify" version="1"><tag k="building" v="yes"/></way></osm>');
  assert.equal(way?.osmId, '5');
  assert.equal(way?.tags['building'], 'yes');
  assert.equal(way?.geometry, undefined);
});
