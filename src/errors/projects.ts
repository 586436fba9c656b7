// Refusals of projects and organizations: names, owners, members and roles.
import { detail, field } from './shapes.ts';

export const projectErrors = {
  projectNotUnique: () => field('non_field_errors', 'The fields name, owner must make a unique set.'),
  projectNameExists: (name: string) => field('name', `Project ${name} already exists.`),
  noRightToCreateProjectIn: (org: string) => field('owner', `You do not have permission to create a project in the organization ${org}.`),
  projectNeedsOwner: () => field('remove', 'Project requires at least one owner'),
  projectOwnerUnremovable: (owner: string) => field('username', `Cannot remove the owner (${owner}) from the project`),
  tagTooLong: (maxLength: number) => field('tags', `Ensure each tag has no more than ${maxLength} characters.`),
  projectRoleAboveOwn: () => detail(403, 'You cannot give a role higher than your own.'),
  projectRoleOfHigherUser: () => detail(403, 'You cannot change the role of a user whose role is higher than your own.'),
  orgExists: (username: string) => field('org', `Organization ${username} already exists.`),
  orgLastOwner: (username: string) => field('username', `${username} is the organization's last owner; make another owner first.`),
  notOrgMember: (username: string, org: string) => field('username', `User '${username}' is not a member of ${org}.`),
} as const;
