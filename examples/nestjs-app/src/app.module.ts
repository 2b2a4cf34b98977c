/**
 * The application: configuration (@nestjs/config), ZooKeeper from it (ZkModule.forRootAsync),
 * scheduling, health, and the three jobs. `AppModule.register(config, journal)` gives one
 * instance its values (the demo runs several in one process; `main.ts` reads the environment).
 */
import { type DynamicModule, Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { ScheduleModule } from '@nestjs/schedule';
import { TerminusModule } from '@nestjs/terminus';
import { ZkModule } from '@zkrx/nestjs';
import { FleetService } from '@zkrx/nestjs/fleet';
import { ZkHealthIndicator } from '@zkrx/nestjs/terminus';
import { Billing } from './billing';
import { HealthController } from './health.controller';
import { Journal } from './journal';
import { OrdersController, Payments } from './orders';
import type { AppConfig } from './settings';
import { TenantRepository, TenantSync } from './tenants';

@Module({})
// biome-ignore lint/complexity/noStaticOnlyClass: a Nest dynamic module is a class with a static factory
export class AppModule {
  static register(config: AppConfig, journal: Journal): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, load: [() => config] }),
        ScheduleModule.forRoot(),
        TerminusModule.forRoot({ logger: false }),
        ZkModule.forRootAsync({
          isGlobal: true,
          inject: [ConfigService],
          useFactory: (settings: ConfigService<AppConfig, true>) => ({
            connect: settings.get('ZK_CONNECT'),
            // How long a crashed instance keeps its locks, leadership and tenants.
            sessionTimeoutMs: 4_000,
            onSuspended: 'release',
            id: settings.get('INSTANCE_ID'),
          }),
        }),
      ],
      controllers: [OrdersController, HealthController],
      providers: [
        { provide: Journal, useValue: journal },
        Payments,
        Billing,
        TenantRepository,
        TenantSync,
        FleetService,
        ZkHealthIndicator,
      ],
    };
  }
}
