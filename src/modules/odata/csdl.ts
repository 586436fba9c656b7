// The $metadata document (OData v4 CSDL XML) and the service document of a form's feed.
import { parentKeyName, SYSTEM_FIELDS, type EntityModel, type GroupProperty, type ODataModel, type Property } from './model.ts';

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function attr(name: string, value: string): string {
  return ` ${name}="${escapeXml(value)}"`;
}

function propertyXml(model: ODataModel, property: Property): string {
  switch (property.kind) {
    case 'answer':
      return `<Property${attr('Name', property.name)}${attr('Type', property.type)}/>`;
    case 'group':
      return `<Property${attr('Name', property.name)}${attr('Type', `${model.namespace}.${property.typeName}`)}/>`;
    case 'repeat':
      return `<NavigationProperty${attr('Name', property.name)}${attr('Type', `Collection(${model.namespace}.${property.entity.typeName})`)}/>`;
  }
}

function entityXml(model: ODataModel, entity: EntityModel): string {
  const own: string[] = ['<Key><PropertyRef Name="__id"/></Key>', '<Property Name="__id" Type="Edm.String" Nullable="false"/>'];
  if (entity.parents.length === 0) own.push(`<Property Name="__system"${attr('Type', `${model.namespace}.SubmissionMetadata`)}/>`);
  for (const parent of entity.parents) own.push(`<Property${attr('Name', parentKeyName(parent))} Type="Edm.String"/>`);
  const body = [...own, ...entity.properties.map((p) => propertyXml(model, p))].join('');
  return `<EntityType${attr('Name', entity.typeName)}>${body}</EntityType>`;
}

function groupXml(model: ODataModel, group: GroupProperty): string {
  return `<ComplexType${attr('Name', group.typeName)}>${group.properties.map((p) => propertyXml(model, p)).join('')}</ComplexType>`;
}

/** The CSDL XML of the model (`$metadata`). */
export function metadataXml(model: ODataModel): string {
  const system = SYSTEM_FIELDS.map((f) => `<Property${attr('Name', f.name)}${attr('Type', f.type)}/>`).join('');
  const types = [
    `<ComplexType Name="SubmissionMetadata">${system}</ComplexType>`,
    ...[...model.groups.values()].map((g) => groupXml(model, g)),
    ...[...model.sets.values()].map((e) => entityXml(model, e)),
  ];
  const sets = [...model.sets.values()].map((e) => `<EntitySet${attr('Name', e.setName)}${attr('EntityType', `${model.namespace}.${e.typeName}`)}/>`);
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="4.0"><edmx:DataServices>' +
    `<Schema xmlns="http://docs.oasis-open.org/odata/ns/edm"${attr('Namespace', model.namespace)}>` +
    types.join('') +
    `<EntityContainer Name="Container">${sets.join('')}</EntityContainer>` +
    '</Schema></edmx:DataServices></edmx:Edmx>'
  );
}

/** The service document: one entry per entity set. */
export function serviceDocument(model: ODataModel, serviceUrl: string): Record<string, unknown> {
  return {
    '@odata.context': `${serviceUrl}/$metadata`,
    value: [...model.sets.values()].map((e) => ({ name: e.setName, kind: 'EntitySet', url: e.setName })),
  };
}
