// Refusals of accounts, passwords, sessions, tokens and OAuth applications.
import { body, detail, error, field, list } from './shapes.ts';

export const accountErrors = {
  userCreationDisabled: () => detail(403, 'You do not have permission to create user.'),
  /** Raised inside the serializer's save() in onadata: a bare list. */
  usernameTaken: (username: string) => list([`User account ${username} already exists`]),
  emailInUse: () => field('email', 'This email address is already in use. '),
  /** A profile change locked out after failed password checks (save() list). */
  profilePasswordLocked: (minutes: number) => list([`Too many password reset attempts. Try again in ${minutes} minutes`]),
  profilePasswordWrong: () => list(['Invalid password']),
  profilePasswordMissing: () => list(['Your password is required when updating your email address.']),
  /** change_password answers `{"error": "…"}`. */
  passwordFieldsBlank: () => error('current_password and new_password fields cannot be blank'),
  passwordChangeLocked: (minutes: number) => error(`Too many password reset attempts. Try again in ${minutes} minutes`),
  passwordWrongWithAttemptsLeft: (attempts: number) => error(`Invalid password. You have ${attempts} attempts left.`),
  /** change_password's validator failures: `{"errors": [...]}`. */
  passwordRejected: (problems: string[]) => body(400, { errors: problems }),
  monthInvalid: () => detail(400, 'Invalid month provided as parameter'),
  yearInvalid: () => detail(400, 'Invalid year provided as parameter'),
  /** The web app's login form (a 400, not the 401 of the API's credentials). */
  loginFailed: () => detail(400, 'Invalid username/password.'),
  tempTokenNotFound: () => detail(400, 'Temporary token not found!'),
  /** onadata's message, leading space included. */
  tokenNotFound: () => detail(400, ' Token not found!'),
} as const;
