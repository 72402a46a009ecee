// The Function App on Flex Consumption (Linux, Python 3.11), running as its user-assigned
// identity. The deployment package lives in a blob container reached with that identity;
// AzureWebJobsStorage is identity-based (accountName / credential / clientId, no key), and
// telemetry authenticates with Entra ID (APPLICATIONINSIGHTS_AUTHENTICATION_STRING).
// Flex Consumption takes the runtime from functionAppConfig.runtime, so the app settings
// must not contain FUNCTIONS_WORKER_RUNTIME or FUNCTIONS_EXTENSION_VERSION.

param name string
param location string
param tags object

@description('Flex Consumption plan (FC1) resource id.')
param planId string

@description('Resource id of the app\'s user-assigned identity.')
param identityId string

@description('Client id of the app\'s user-assigned identity.')
param identityClientId string

@description('Host storage account (AzureWebJobsStorage and the deployment package).')
param storageAccountName string

@description('Blob container of the deployment package in that account.')
param deploymentContainerName string

@description('Application Insights component of the app.')
param applicationInsightsName string

@description('The app\'s own settings (main.bicep); the host\'s settings are added below.')
param appSettings object

@description('Most instances of each scale group (Flex Consumption applies it per group).')
@minValue(40)
@maxValue(1000)
param maximumInstanceCount int

param instanceMemoryMB int

@description('Application (client) id of the operators\' Entra ID app registration: App Service authentication then requires Entra ID sign-in for every request. Empty: none, and the app refuses its operations routes in Azure (ops/access.py).')
param operatorsAppClientId string

@description('Always-ready instances of the durable group (orchestration, activity and entity triggers); 0: none.')
@minValue(0)
param durableAlwaysReadyCount int

@description('Always-ready instances of each group in deadlineGroups; 0: none.')
@minValue(0)
param deadlineAlwaysReadyCount int

@description('Scale groups an order\'s CompleteBy waits on besides durable (function:<name> of each agent and of the reply router).')
param deadlineGroups array

var durableReady = (durableAlwaysReadyCount > 0) ? [
  {
    name: 'durable'
    instanceCount: durableAlwaysReadyCount
  }
] : []
var deadlineReady = [for group in deadlineGroups: {
  name: group
  instanceCount: deadlineAlwaysReadyCount
}]

resource storageAccount 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: storageAccountName
}

resource applicationInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: applicationInsightsName
}

resource functionApp 'Microsoft.Web/sites@2024-04-01' = {
  name: name
  location: location
  tags: tags
  kind: 'functionapp,linux'
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: {
      '${identityId}': {}
    }
  }
  properties: {
    serverFarmId: planId
    httpsOnly: true
    siteConfig: {
      minTlsVersion: '1.2'
    }
    functionAppConfig: {
      deployment: {
        storage: {
          type: 'blobContainer'
          value: '${storageAccount.properties.primaryEndpoints.blob}${deploymentContainerName}'
          authentication: {
            type: 'UserAssignedIdentity'
            userAssignedIdentityResourceId: identityId
          }
        }
      }
      scaleAndConcurrency: {
        maximumInstanceCount: maximumInstanceCount
        instanceMemoryMB: instanceMemoryMB
        // Flex Consumption scales Durable Functions' triggers as one group, 'durable', and
        // every other non-HTTP trigger as a group of its own, 'function:<name>'. Always-ready
        // instances keep a worker warm for the durable group and for each group an order's
        // CompleteBy waits on (the agents, the reply router), so neither an attempt's first
        // replay nor its first agent message waits for a cold start (Learn: "Flex
        // Consumption plan hosting", always ready instances; docs/deploy.md, "Warm instances").
        alwaysReady: concat(durableReady, (deadlineAlwaysReadyCount > 0) ? deadlineReady : [])
      }
      runtime: {
        name: 'python'
        version: '3.11'
      }
    }
  }
}

resource siteSettings 'Microsoft.Web/sites/config@2024-04-01' = {
  parent: functionApp
  name: 'appsettings'
  properties: union(appSettings, {
    // Identity-based host storage: the host and the Durable Functions task hub.
    AzureWebJobsStorage__accountName: storageAccount.name
    AzureWebJobsStorage__credential: 'managedidentity'
    AzureWebJobsStorage__clientId: identityClientId
    // Not a secret (it only says where telemetry goes); ingestion needs the identity below.
    APPLICATIONINSIGHTS_CONNECTION_STRING: applicationInsights.properties.ConnectionString
    APPLICATIONINSIGHTS_AUTHENTICATION_STRING: 'Authorization=AAD;ClientId=${identityClientId}'
  }, empty(operatorsAppClientId) ? {} : {
    // App Service authentication proves the app to Entra ID with the app's identity (a
    // federated credential on the operators' app registration) instead of a client
    // secret: the setting holds the identity's client id, not a secret.
    OVERRIDE_USE_MI_FIC_ASSERTION_CLIENTID: identityClientId
  })
}

// App Service authentication (Easy Auth) in front of the whole app: every HTTP request
// needs an Entra ID sign-in to the operators' app registration; the platform then passes
// the signed-in principal (X-MS-CLIENT-PRINCIPAL*) and sets WEBSITE_AUTH_ENABLED, and
// ops/access.py takes the operator from it only; resubmitting needs the app role
// Orders.Operator (docs/deploy.md, "Operators: Entra ID sign-in"). Service Bus and timer
// triggers are not HTTP and are not affected. The Durable Functions HTTP API and the
// host's admin API keep their keys.
resource authentication 'Microsoft.Web/sites/config@2024-04-01' = if (!empty(operatorsAppClientId)) {
  parent: functionApp
  name: 'authsettingsV2'
  properties: {
    platform: {
      enabled: true
    }
    globalValidation: {
      requireAuthentication: true
      unauthenticatedClientAction: 'RedirectToLoginPage'
      redirectToProvider: 'azureactivedirectory'
      // Left to their system and master keys, which the host still requires: the Durable
      // Functions HTTP API, and the host's admin API (whether Easy Auth's sign-in covers
      // /admin is decided in closed-source platform code; excluding it keeps the key the
      // only gate, as without Easy Auth; docs/deploy.md, "After deploying").
      excludedPaths: [
        '/runtime/webhooks/durabletask/*'
        '/admin/*'
      ]
    }
    httpSettings: {
      requireHttps: true
    }
    identityProviders: {
      azureActiveDirectory: {
        enabled: true
        registration: {
          openIdIssuer: '${environment().authentication.loginEndpoint}${tenant().tenantId}/v2.0'
          clientId: operatorsAppClientId
          clientSecretSettingName: 'OVERRIDE_USE_MI_FIC_ASSERTION_CLIENTID'
        }
        validation: {
          allowedAudiences: [
            'api://${operatorsAppClientId}'
            operatorsAppClientId
          ]
        }
      }
    }
    login: {
      tokenStore: {
        enabled: false
      }
    }
  }
  // After the app settings: the credential setting must exist, and two writes to the
  // site's configuration at once can conflict.
  dependsOn: [
    siteSettings
  ]
}

// No basic-auth publishing credentials: FTP and the SCM (Kudu) site accept Entra ID only,
// so a deployment goes through an identity holding Microsoft.Web/sites/publish/Action, as
// `func azure functionapp publish` does with the signed-in Azure CLI account (Learn:
// "Disable basic authentication in App Service deployments").
resource basicPublishing 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2024-04-01' = [for channel in [
  'ftp'
  'scm'
]: {
  parent: functionApp
  name: channel
  properties: {
    allow: false
  }
}]

output name string = functionApp.name
output defaultHostName string = functionApp.properties.defaultHostName
