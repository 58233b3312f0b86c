/**
 * REST v2 wire schemas of ECR delegations (`/v2/registries/delegations`, `CreateDelegationRequest`,
 * `EcrDelegation`, `ListDelegationsResponse`): the create body parsed strictly, answers loosely.
 *
 * A delegation lets RunPod pull one image of an Amazon ECR repository: the create names the
 * repository by its ARN (`arn:aws:ecr:<region>:<account>:repository/<name>`); the service answers
 * the parts (`awsUser`, `awsRegion`, `repository`, `tag`) and the registry host to log in to
 * (`dockerRegistryUri`). Nothing in the request is a credential.
 */
import { z } from "zod";
import { str } from "./fields";

/**
 * An ECR repository ARN, as AWS writes one: partition (`aws`, `aws-cn`, `aws-us-gov`), region,
 * 12-digit account, `repository/` and the repository name (lowercase path segments), optionally
 * followed by `:<tag>` (the image tag delegated; the service answers `latest` without one).
 */
export const ECR_REPOSITORY_ARN =
  /^arn:(aws(?:-[a-z]+)*):ecr:([a-z]{2}(?:-[a-z]+)+-\d):(\d{12}):repository\/((?:[a-z0-9]+(?:[._-][a-z0-9]+)*\/)*[a-z0-9]+(?:[._-][a-z0-9]+)*)(?::([A-Za-z0-9_][A-Za-z0-9._-]{0,127}))?$/;

/** What {@link ECR_REPOSITORY_ARN} accepts, for messages. */
export const ECR_REPOSITORY_ARN_RULE =
  "an ECR repository ARN, arn:aws:ecr:<region>:<12-digit account>:repository/<name>[:<tag>], " +
  "e.g. arn:aws:ecr:us-east-2:418399314813:repository/runpod/deployment";

/** The parts of an ECR repository ARN; `tag` is undefined when the ARN names none. */
export interface EcrRepositoryRef {
  partition: string;
  awsRegion: string;
  awsUser: string;
  repository: string;
  tag?: string;
}

/** The parts of `arn`, or undefined when it is no ECR repository ARN ({@link ECR_REPOSITORY_ARN_RULE}). */
export function parseEcrRepositoryArn(arn: string): EcrRepositoryRef | undefined {
  const m = ECR_REPOSITORY_ARN.exec(arn);
  if (!m) return undefined;
  const [, partition, awsRegion, awsUser, repository, tag] = m as unknown as string[];
  return {
    partition: partition as string,
    awsRegion: awsRegion as string,
    awsUser: awsUser as string,
    repository: repository as string,
    ...(tag === undefined ? {} : { tag }),
  };
}

/** Longest repository ARN taken, in characters (a 256-character name, a 128-character tag and the prefix). */
export const ECR_ARN_MAX_LENGTH = 450;

/** Body of `POST /v2/registries/delegations` (`CreateDelegationRequest`): `resource` is required. */
export const EcrDelegationCreateInputSchema = z.strictObject({
  /** The ECR repository ARN ({@link ECR_REPOSITORY_ARN_RULE}). */
  resource: str("resource")
    .max(ECR_ARN_MAX_LENGTH, { error: `resource must be at most ${ECR_ARN_MAX_LENGTH} characters` })
    .regex(ECR_REPOSITORY_ARN, { error: `resource must be ${ECR_REPOSITORY_ARN_RULE}` }),
  /** Optional name of the delegation. */
  name: str("name").nullable().optional(),
});
export type EcrDelegationCreateInput = z.input<typeof EcrDelegationCreateInputSchema>;

/** A delegation as the service answers (`EcrDelegation`). */
export const EcrDelegationSchema = z.looseObject({
  /** The delegation's id (what revoking it takes). */
  id: z.string().min(1),
  /** Its name, when one was given at creation; null or absent otherwise. */
  name: z.string().nullable().optional(),
  /** The RunPod user that created the delegation. */
  delegatorUserId: z.string(),
  /** The AWS user or role the access is delegated to. */
  awsUser: z.string(),
  /** The ECR repository's name. */
  repository: z.string(),
  /** The ECR image tag. */
  tag: z.string(),
  /** The repository's AWS region, e.g. `eu-west-1`. */
  awsRegion: z.string(),
  /** The ECR registry URI for `docker login`; absent when the service gives none. */
  dockerRegistryUri: z.string().optional(),
  /** When the delegation was created (ISO 8601). */
  createdAt: z.string(),
});
export type EcrDelegation = z.infer<typeof EcrDelegationSchema>;

/** `GET /v2/registries/delegations` (`ListDelegationsResponse`): `{ delegations: [...] }`. */
export const EcrDelegationListSchema = z.looseObject({ delegations: z.array(EcrDelegationSchema) });
